package srt

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
)

// TestPullSendNoSecret pulls and sends with addresses that carry a passphrase and a password,
// refused by a server with another passphrase, calling a port where nothing answers, and
// refused as addresses: no error or log line shows a secret.
func TestPullSendNoSecret(t *testing.T) {
	const (
		passphrase = "phraseS3cret0"
		password   = "pa55S3cret"
	)
	srv, _, stopSrv := startServer(t, Options{Passphrase: "correct-horse-battery"})
	defer func() { _ = stopSrv() }()
	port, closed := portOf(srv.Addr()), testutil.FreePort(t)
	secrets := "&passphrase=" + passphrase + "&conntimeo=1000"
	pull := func(ctx context.Context, u string, log *slog.Logger) error {
		return Pull(ctx, stream.New("x", stream.Options{}), PullOptions{URL: u, Log: log})
	}
	send := func(ctx context.Context, u string, log *slog.Logger) error {
		s := stream.New("src", stream.Options{})
		r, err := s.NewReader("send")
		if err != nil {
			return err
		}
		defer r.Close()
		return Send(ctx, r, []media.Track{mediatest.H264(0)}, SendOptions{URL: u, Log: log})
	}
	for _, tc := range []struct {
		name string
		run  func(context.Context, string, *slog.Logger) error
		url  string
	}{
		{"pull refused", pull, fmt.Sprintf("srt://user:%s@127.0.0.1:%d?streamid=receiver/studio/cam1", password, port) + secrets},
		{"send refused", send, fmt.Sprintf("srt://user:%s@127.0.0.1:%d?streamid=publisher/studio/cam1", password, port) + secrets},
		{"pull no answer", pull, fmt.Sprintf("srt://127.0.0.1:%d?streamid=cam1", closed) + secrets},
		{"send no answer", send, fmt.Sprintf("srt://127.0.0.1:%d?streamid=cam1", closed) + secrets},
		{"bad option", pull, fmt.Sprintf("srt://user:%s@127.0.0.1:%d?latency=abc", password, port) + secrets},
		{"unparsable", send, fmt.Sprintf("srt://user:%s@127.0.0.1:%d x?streamid=cam1", password, port) + secrets},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testutil.FailsKeeping(t, 30*time.Second, func(ctx context.Context, log *slog.Logger) error {
				return tc.run(ctx, tc.url, log)
			}, passphrase, password)
		})
	}
}
