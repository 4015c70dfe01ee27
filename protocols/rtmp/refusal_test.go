package rtmp

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/budget"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
)

// TestRefusalLogsLimited: clients looping on refused connections (an unknown app, a stream that
// does not exist, a busy key, a missing password) get each kind of refusal logged at most once
// a second, with the number of refusals it stands for, not a line a connection.
func TestRefusalLogsLimited(t *testing.T) {
	reg := stream.NewRegistry(stream.Options{Log: testLog(t)})
	held, err := reg.Publish("busy")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	var logs testutil.SyncBuffer
	srv := &Server{Registry: reg, PlayPassword: "Play-s3cret.1", Log: slog.New(slog.NewTextHandler(&logs, nil))}
	addr := startServer(t, srv)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pull := func(url string) error {
		s := stream.New("pulled", stream.Options{Log: testLog(t)})
		defer s.Close()
		return Pull(ctx, s, PullOptions{URL: url, Log: testLog(t)})
	}
	push := func(url, key string) error {
		s := stream.New("pushed", stream.Options{Log: testLog(t)})
		defer s.Close()
		r, err := s.NewReader("push")
		if err != nil {
			return err
		}
		defer r.Close()
		return Push(ctx, r, nil, PushOptions{URL: url, Key: key, Log: testLog(t)})
	}
	kinds := []struct {
		line string
		try  func() error
	}{
		{"rtmp: connect refused", func() error { return pull("rtmp://" + addr + "/nope/x") }},
		{"rtmp: play refused", func() error { return pull("rtmp://" + addr + "/live/nosuch?password=Play-s3cret.1") }},
		{"rtmp: publish refused", func() error { return push("rtmp://"+addr+"/live", "busy") }},
	}
	const n = 12
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, n*len(kinds))
	for range n {
		for _, k := range kinds {
			wg.Go(func() { errs <- k.try() })
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		if !errors.Is(err, ErrRefused) {
			t.Fatalf("a client: %v, want refused", err)
		}
	}
	most := int(elapsed/budget.LogEvery) + 1
	out := logs.String()
	for _, k := range kinds {
		if got := strings.Count(out, k.line); got == 0 || got > most || got >= n {
			t.Errorf("%d lines %q for %d refusals in %v, want 1 to %d:\n%s", got, k.line, n, elapsed, most, out)
		}
	}
	if !strings.Contains(out, "refused=") {
		t.Errorf("no line says how many refusals it stands for:\n%s", out)
	}
}
