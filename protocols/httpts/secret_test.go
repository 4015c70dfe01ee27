package httpts

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
)

// withSecrets puts a password and a query token into base ("http://host:port").
func withSecrets(base, path string) string {
	return strings.Replace(base, "http://", "http://user:pa55S3cret@", 1) + path + "?token=tok3nS3cret&method=PUT"
}

// TestSendNoSecret sends to a server that refuses the stream and to a closed port: neither the
// error nor a log line shows the URL's password or token.
func TestSendNoSecret(t *testing.T) {
	testutil.RequireFFmpeg(t)
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no", http.StatusForbidden)
	}))
	defer srv.Close()
	s := stream.New("send-secret", stream.Options{})
	streamtest.PlayCBR(t, s)
	testutil.Eventually(t, 10*time.Second, "tracks", func() bool { return len(s.Tracks()) > 0 })
	for _, u := range []string{withSecrets(srv.URL, "/in"), withSecrets(fmt.Sprintf("http://127.0.0.1:%d", testutil.FreePort(t)), "/in")} {
		r, err := s.NewReader("send")
		if err != nil {
			t.Fatal(err)
		}
		testutil.FailsKeeping(t, 20*time.Second, func(ctx context.Context, log *slog.Logger) error {
			err := Send(ctx, r, s.Tracks(), SendOptions{URL: u, Log: log})
			if err != nil && !strings.Contains(err.Error(), "token=") {
				t.Errorf("Send: %v: the error no longer names the token's key", err)
			}
			return err
		}, "tok3nS3cret", "pa55S3cret")
		r.Close()
	}
}

// TestPullNoSecret pulls from a server that answers 404 and from a closed port.
func TestPullNoSecret(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	for _, u := range []string{withSecrets(srv.URL, "/live.ts"), withSecrets(fmt.Sprintf("http://127.0.0.1:%d", testutil.FreePort(t)), "/live.ts")} {
		testutil.FailsKeeping(t, time.Minute, func(ctx context.Context, log *slog.Logger) error {
			return Pull(ctx, stream.New("pull-secret", stream.Options{}), PullOptions{URL: u, Log: log})
		}, "tok3nS3cret", "pa55S3cret")
	}
}
