package rtmp

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
)

// testLog logs to the test at warning level and above; -v shows info too.
func testLog(t testing.TB) *slog.Logger {
	level := slog.LevelWarn
	if testing.Verbose() {
		level = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: level}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// startServer runs srv until the test ends, or until stop, and returns its address.
func startServer(t testing.TB, srv *Server) string {
	addr, _ := startServerStop(t, srv)
	return addr
}

// startServerStop is startServer with a stop function that waits for Run to return.
func startServerStop(t testing.TB, srv *Server) (string, func()) {
	t.Helper()
	if srv.ListenAddr == "" {
		srv.ListenAddr = "127.0.0.1:0"
	}
	if srv.Log == nil {
		srv.Log = testLog(t)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	select {
	case <-srv.Ready():
	case err := <-done:
		t.Fatalf("Run: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("server not listening after 10 s")
	}
	return srv.Addr().String(), stop
}

// encodeArgs are the constant-bitrate test source of the end-to-end tests: 640x360 H.264 at
// 1000 kbit/s and AAC at 64 kbit/s, at real time.
func encodeArgs(seconds float64, vbitrate string) []string {
	return append(append([]string{"-hide_banner", "-loglevel", "error"},
		testutil.Pattern{SampleRate: 44100, Realtime: true}.Args()...),
		"-t", strconv.FormatFloat(seconds, 'f', -1, 64),
		"-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-b:v", vbitrate, "-minrate", vbitrate,
		"-maxrate", vbitrate, "-bufsize", "500k", "-x264-params", "nal-hrd=cbr", "-g", "25",
		"-c:a", "aac", "-b:a", "64k")
}

// startFFmpeg starts ffmpeg with args; it is killed when the test ends.
func startFFmpeg(t testing.TB, args ...string) *testutil.Child {
	t.Helper()
	return testutil.StartChild(t, testutil.RequireFFmpeg(t), args...)
}

// readStream makes the stream name, logging to the test, with a reader called reader;
// closeAll closes the reader, then the stream.
func readStream(t testing.TB, name, reader string) (s *stream.Stream, r *stream.Reader, closeAll func()) {
	t.Helper()
	s = stream.New(name, stream.Options{Log: testLog(t)})
	r, err := s.NewReader(reader)
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	return s, r, func() { r.Close(); s.Close() }
}

// waitPublished waits until reg holds the stream name with its two tracks (video and audio)
// and returns it, failing the test after timeout.
func waitPublished(t testing.TB, reg *stream.Registry, name string, timeout time.Duration) *stream.Stream {
	t.Helper()
	var s *stream.Stream
	testutil.Eventually(t, timeout, fmt.Sprintf("the publication of %q", name), func() bool {
		var ok bool
		s, ok = reg.Get(name)
		return ok && len(s.Tracks()) == 2
	})
	return s
}

// readUnits reads units until n arrived or timeout, checking that DTS increases per track.
func readUnits(t testing.TB, r *stream.Reader, n int, timeout time.Duration) []*media.AccessUnit {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var units []*media.AccessUnit
	last := map[int]int64{}
	for len(units) < n {
		au, err := r.Read(ctx)
		if err != nil {
			t.Fatalf("read after %d units: %v", len(units), err)
		}
		if prev, ok := last[au.Track]; ok && au.DTS <= prev && !au.Discontinuity {
			t.Fatalf("track %d: DTS %d after %d", au.Track, au.DTS, prev)
		}
		last[au.Track] = au.DTS
		units = append(units, au)
	}
	return units
}

// probe runs ffprobe on a file and returns codec_name,width,height per stream.
func probe(t testing.TB, path string) string {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-show_entries", "stream=codec_name,width,height",
		"-of", "csv=p=0", path).CombinedOutput()
	if err != nil {
		t.Fatalf("ffprobe %s: %v: %s", path, err, out)
	}
	return string(out)
}

var discardLog = slog.New(slog.DiscardHandler)
