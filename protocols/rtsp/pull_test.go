package rtsp

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
)

// startPull runs Pull into a new Stream in the background; wait returns Pull's result.
func startPull(t *testing.T, url string) (dst *stream.Stream, c *collector, cancel context.CancelFunc,
	wait func(time.Duration) (error, bool),
) {
	t.Helper()
	log := testLog(t)
	dst = stream.New("pulled", stream.Options{Log: log})
	t.Cleanup(dst.Close)
	c = collect(t, dst)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- Pull(ctx, dst, PullOptions{URL: url, Log: log}) }()
	var mu sync.Mutex
	var res error
	var got bool
	wait = func(d time.Duration) (error, bool) {
		mu.Lock()
		defer mu.Unlock()
		if got {
			return res, true
		}
		select {
		case res = <-errc:
			got = true
		case <-time.After(d):
		}
		return res, got
	}
	t.Cleanup(func() {
		cancel()
		if _, ok := wait(30 * time.Second); !ok {
			t.Error("Pull did not return within 30 s of its context ending")
		}
	})
	return dst, c, cancel, wait
}

// TestPull has ffmpeg publish to a Server and Pull read it back over each transport, with
// credentials.
func TestPull(t *testing.T) {
	t.Parallel()
	rs := startServer(t, ListenOptions{User: "user", Password: "p@ss"})
	auth := strings.Replace(rs.url, "rtsp://", "rtsp://user:p%40ss@", 1)
	p := startPublisher(t, auth, "tcp", "libx264", "aac", 30)
	waitTracks(t, rs.strm, 2)
	for _, tc := range []struct{ name, query string }{
		{"tcp", "?rtsp_transport=tcp"},
		{"udp", "?rtsp_transport=udp"},
		{"auto", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst, c, cancel, wait := startPull(t, auth+tc.query)
			checkAV(t, waitTracks(t, dst, 2), media.CodecH264, media.CodecAAC)
			testutil.Eventually(t, 20*time.Second, "50 video units", func() bool { return c.count(0) >= 50 })
			cancel()
			if err, ok := wait(30 * time.Second); !ok {
				t.Fatal("Pull did not return")
			} else if err != nil {
				t.Errorf("Pull after cancel = %v, want nil", err)
			}
			c.check(t)
			t.Logf("units %v", c.counts())
		})
	}
	p.Interrupt(10 * time.Second)
}

// TestPullRemoteEnds checks that Pull returns nil when the remote ends the stream after media
// flowed.
func TestPullRemoteEnds(t *testing.T) {
	t.Parallel()
	rs := startServer(t, ListenOptions{})
	p := startPublisher(t, rs.url, "tcp", "libx264", "aac", 4)
	waitTracks(t, rs.strm, 2)
	_, c, _, wait := startPull(t, rs.url+"?rtsp_transport=tcp")
	if err := p.Wait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	if err, ok := wait(30 * time.Second); !ok {
		t.Fatal("Pull did not return after the remote ended")
	} else if err != nil {
		t.Errorf("Pull = %v, want nil after the remote ended", err)
	}
	if c.count(0) == 0 {
		t.Error("no video unit pulled")
	}
	c.check(t)
}

// TestPullErrors checks that Pull fails when there is nothing to pull.
func TestPullErrors(t *testing.T) {
	t.Parallel()
	rs := startServer(t, ListenOptions{User: "u", Password: "p"})
	port := testutil.FreePort(t)
	for _, tc := range []struct{ name, url, want string }{
		{"refused", "rtsp://127.0.0.1:" + itoa(port) + "/live", "refused"},
		{"no credentials", rs.url, "401"},
		{"not published", strings.Replace(rs.url, "rtsp://", "rtsp://u:p@", 1), "404"},
		{"bad transport", rs.url + "?rtsp_transport=sctp", "rtsp_transport"},
		{"bad scheme", "http://127.0.0.1/x", "scheme"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := stream.New("pulled", stream.Options{Log: testLog(t)})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err := Pull(ctx, dst, PullOptions{URL: tc.url, Log: testLog(t)})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Pull = %v, want an error with %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), ":p@") {
				t.Errorf("error %q shows the password", err)
			}
		})
	}
}

func itoa(n int) string { return (&net.TCPAddr{Port: n}).String()[1:] }
