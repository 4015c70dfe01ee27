package httpts

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
)

// startServer serves a Server for s on a loopback port until the test ends.
func startServer(t *testing.T, s *stream.Stream) string {
	t.Helper()
	_, addr := serveOpts(t, s, ServerOptions{})
	return "http://" + addr
}

// publishHTTP runs ffmpeg sending the test source to url.
func publishHTTP(t *testing.T, url string, seconds float64, extra ...string) error {
	args := append(streamtest.CBRArgs(seconds, true), extra...)
	args = append(args, url)
	return streamtest.RunFFmpeg(context.Background(), t, args...)
}

// TestServerFFmpegPOST is not parallel: it measures rates.
func TestServerFFmpegPOST(t *testing.T) {
	testutil.RequireFFmpeg(t)
	s := stream.New("http-post", stream.Options{})
	base := startServer(t, s)
	streamtest.CheckCBRLive(t, s, func() error { return publishHTTP(t, base+"/live/stream", 10, "-f", "mpegts") }, 200)
}

func TestServerFFmpegPUTAndFLV(t *testing.T) {
	testutil.RequireFFmpeg(t)
	t.Parallel()
	for _, tc := range []struct {
		name  string
		extra []string
	}{
		{"PUT", []string{"-method", "PUT", "-f", "mpegts"}},
		{"FLV", []string{"-f", "flv"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := stream.New("http-"+tc.name, stream.Options{})
			base := startServer(t, s)
			col := streamtest.Collect(t, s)
			if err := publishHTTP(t, base+"/", 3, tc.extra...); err != nil {
				t.Fatal(err)
			}
			testutil.Eventually(t, 10*time.Second, "the session to end", func() bool { return !s.Publishing() })
			streamtest.CheckCBRReceived(t, s, col, 100, 10*time.Second) // about 3 s
		})
	}
}

// slowBody feeds a file through a pipe at about the given rate until closed.
func slowBody(t *testing.T, path string, bytesPerSec int) (io.ReadCloser, func()) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		chunk := bytesPerSec / 10
		for off := 0; off < len(data); off += chunk {
			if _, err := pw.Write(data[off:min(off+chunk, len(data))]); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		pw.Close()
	}()
	return pr, func() { pw.CloseWithError(io.ErrClosedPipe); <-done }
}

func TestServerConflict(t *testing.T) {
	t.Parallel()
	s := stream.New("http-conflict", stream.Options{})
	base := startServer(t, s)
	body, stop := slowBody(t, streamtest.CBRFile(t, 4, "mpegts"), 200_000)
	first := make(chan int, 1)
	go func() {
		resp, err := http.Post(base+"/a", "video/mp2t", body)
		if err != nil {
			first <- 0
			return
		}
		resp.Body.Close()
		first <- resp.StatusCode
	}()
	testutil.Eventually(t, 10*time.Second, "the first publisher", s.Publishing)
	resp, err := http.Post(base+"/b", "video/mp2t", bytes.NewReader(make([]byte, 1000)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("second publisher: %s, want 409", resp.Status)
	}
	resp, err = http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %s, want 405", resp.Status)
	}
	stop()
	<-first
}

// TestServerReconnect is not parallel: it counts the process's goroutines and descriptors.
func TestServerReconnect(t *testing.T) {
	testutil.RequireFFmpeg(t)
	s := stream.New("http-reconnect", stream.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	streamtest.CheckReconnects(t, s, 4, func(ctx context.Context) error {
		return NewServer(s, ServerOptions{}).Serve(ctx, ln)
	}, func() error { return publishHTTP(t, "http://"+ln.Addr().String()+"/", 2, "-f", "mpegts") })
}

func TestServerRandomBytes(t *testing.T) {
	testutil.RequireFFmpeg(t)
	t.Parallel()
	s := stream.New("http-random", stream.Options{})
	base := startServer(t, s)
	junk := make([]byte, 2<<20)
	_, _ = rand.Read(junk)
	for i := 0; i < len(junk); i += 188 {
		junk[i] = 0x47 // aligned sync bytes make the demuxer work harder
	}
	resp, err := http.Post(base+"/", "video/mp2t", bytes.NewReader(junk))
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("random body: %s %s, want 400", resp.Status, msg)
	}
	col := streamtest.Collect(t, s)
	if err := publishHTTP(t, base+"/", 3, "-f", "mpegts"); err != nil {
		t.Fatal(err)
	}
	streamtest.CheckCBRTracks(t, s.Tracks())
	if aus := col.Snapshot(); len(aus) < 50 {
		t.Fatalf("%d units after the random body", len(aus))
	}
}

// TestListenNoAddr: an empty Addr is refused at once, not bound to a random port.
func TestListenNoAddr(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := Listen(ctx, stream.New("http-noaddr", stream.Options{}), ServerOptions{}); err == nil || !strings.Contains(err.Error(), "no address") {
		t.Fatalf("Listen with an empty Addr: %v, want a no-address error", err)
	}
}
