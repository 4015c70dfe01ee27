package httpts

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
)

// pacedFile serves a file as a continuous stream at about its real-time rate.
func pacedFile(t *testing.T, path string, seconds float64, contentType string) *httptest.Server {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		rc := http.NewResponseController(w)
		chunk := int(float64(len(data)) / seconds / 10)
		for off := 0; off < len(data); off += chunk {
			if _, err := w.Write(data[off:min(off+chunk, len(data))]); err != nil {
				return
			}
			_ = rc.Flush()
			select {
			case <-time.After(100 * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestPullPaced(t *testing.T) {
	testutil.RequireFFmpeg(t)
	t.Parallel()
	for _, tc := range []struct {
		name, path, ctype string
	}{
		{"TS", streamtest.CBRFile(t, 3, "mpegts"), "video/mp2t"},
		{"FLV", streamtest.CBRFile(t, 3, "flv"), "video/x-flv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := pacedFile(t, tc.path, 3, tc.ctype)
			s := stream.New("pull-"+tc.name, stream.Options{})
			col := streamtest.Collect(t, s)
			start := time.Now()
			if err := Pull(context.Background(), s, PullOptions{URL: srv.URL + "/live"}); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took < 2*time.Second {
				t.Errorf("pull took %s, want the file's pace", took)
			}
			if s.Publishing() {
				t.Error("still publishing after the pull returned")
			}
			streamtest.CheckCBRReceived(t, s, col, 101, 5*time.Second)
		})
	}
}

// TestPullFFmpegServer pulls from ffmpeg serving MPEG-TS over HTTP (-listen 1).
func TestPullFFmpegServer(t *testing.T) {
	testutil.RequireFFmpeg(t)
	t.Parallel()
	port := testutil.FreePort(t)
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	ffErr := make(chan error, 1)
	go func() {
		args := append(streamtest.CBRArgs(4, true), "-f", "mpegts", "-listen", "1", url)
		ffErr <- streamtest.RunFFmpeg(context.Background(), t, args...)
	}()
	s := stream.New("pull-ffmpeg", stream.Options{})
	col := streamtest.Collect(t, s)
	var err error
	deadline := time.Now().Add(20 * time.Second)
	for {
		err = Pull(context.Background(), s, PullOptions{URL: url})
		if err == nil || !strings.Contains(err.Error(), "refused") || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond) // ffmpeg is not listening yet
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := <-ffErr; err != nil {
		t.Log(err) // ffmpeg may complain that the client went away at the end
	}
	streamtest.CheckCBRReceived(t, s, col, 150, 10*time.Second) // about 4 s
}

func TestPullErrors(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			http.NotFound(w, r)
		case "/empty":
		case "/text":
			fmt.Fprint(w, strings.Repeat("not a stream\n", 1000))
		case "/stall":
			_, _ = w.Write([]byte{0x47, 0x40, 0x00, 0x10})
			http.NewResponseController(w).Flush()
			<-r.Context().Done()
		case "/trickle":
			// A byte every 50 ms: moving, but far below any stream.
			for r.Context().Err() == nil {
				_, _ = w.Write([]byte{0x47})
				_ = http.NewResponseController(w).Flush()
				time.Sleep(50 * time.Millisecond)
			}
		case "/bigheader":
			w.Header().Set("X-Big", strings.Repeat("x", 100<<10))
			w.WriteHeader(http.StatusOK)
		}
	}))
	defer srv.Close()
	for _, tc := range []struct{ path, want string }{
		{"/missing", "404"},
		{"/empty", "no MPEG-TS or FLV"},
		{"/text", "no MPEG-TS or FLV"},
		{"/stall", "less than 4096 bytes received in 500ms"},
		{"/trickle", "less than 4096 bytes received in 500ms"},
		{"/bigheader", "response headers exceeded"},
	} {
		s := stream.New("pull-err", stream.Options{})
		err := Pull(context.Background(), s, PullOptions{URL: srv.URL + tc.path, IdleTimeout: 500 * time.Millisecond})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.path, err, tc.want)
		}
	}
	if err := Pull(context.Background(), stream.New("x", stream.Options{}), PullOptions{URL: "ftp://x/"}); err == nil {
		t.Error("ftp URL accepted")
	}
}
