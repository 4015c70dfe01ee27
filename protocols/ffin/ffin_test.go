package ffin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
)

func TestArgs(t *testing.T) {
	cases := []struct {
		address   string
		re, rwTmo bool
	}{
		{"/data/in.mp4", true, false},
		{"in.flv", true, false},
		{"file:///data/in.ts", true, false},
		{"FILE:///data/in.ts", true, false},
		{"http://example.com/live.ts", false, true},
		{"https://example.com/live.m3u8", false, true},
		{"rtsp://cam.local/stream", false, true},
		{"rtmp://host/app/key", false, true},
		{"srt://host:9000?streamid=x", false, true},
		{"hls+http://host/x.m3u8", false, true},
		{"odd name://x", true, false},
		{"://x", true, false},
	}
	for _, tc := range cases {
		args := Args(tc.address)
		i := slices.Index(args, "-i")
		if i < 0 || args[i+1] != tc.address {
			t.Errorf("%s: args %q", tc.address, args)
			continue
		}
		pre := args[:i]
		if got := slices.Contains(pre, "-re"); got != tc.re {
			t.Errorf("%s: -re %v, want %v", tc.address, got, tc.re)
		}
		j := slices.Index(pre, "-rw_timeout")
		if (j >= 0) != tc.rwTmo || (j >= 0 && pre[j+1] != "10000000") {
			t.Errorf("%s: args %q, rw_timeout wanted: %v", tc.address, args, tc.rwTmo)
		}
		if !slices.Equal(args[i+2:], []string{"-c", "copy", "-f", "mpegts", "-flush_packets", "1", "pipe:1"}) {
			t.Errorf("%s: output args %q", tc.address, args[i+2:])
		}
		if !slices.Contains(pre, "-nostdin") || !slices.Contains(pre, "-hide_banner") || !slices.Contains(pre, "error") {
			t.Errorf("%s: args %q", tc.address, args)
		}
	}
}

func TestCheckAddress(t *testing.T) {
	for _, a := range []string{"", "  ", "-i", "-f lavfi", "-", "a\nb", "x\x00"} {
		err := Run(context.Background(), stream.New("x", stream.Options{}), Options{FFmpeg: "ffmpeg", Address: a})
		if !errors.Is(err, ErrBadAddress) {
			t.Errorf("%q: %v, want ErrBadAddress", a, err)
		}
	}
	for _, a := range []string{"in.ts", "http://h/x", "x-y.ts", "./-x.ts"} {
		if err := checkAddress(a); err != nil {
			t.Errorf("%q refused: %v", a, err)
		}
	}
}

// Source: constant-bitrate H.264 640x360 + AAC.
const srcKbps = 1000 + 64

var (
	fileOnce sync.Once
	filePath string
	fileErr  error
)

// sourceFile makes a 6 s MP4 of the test source once.
func sourceFile(t *testing.T) string {
	ffmpeg := testutil.RequireFFmpeg(t)
	fileOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ffin-test-")
		if err != nil {
			fileErr = err
			return
		}
		filePath = filepath.Join(dir, "src.mp4")
		out, err := exec.Command(ffmpeg, append(append([]string{"-hide_banner", "-loglevel", "error", "-nostdin"},
			testutil.Pattern{}.Args()...),
			"-t", "6", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p",
			"-b:v", "1000k", "-minrate", "1000k", "-maxrate", "1000k", "-bufsize", "500k", "-x264-params", "nal-hrd=cbr",
			"-g", "25", "-c:a", "aac", "-b:a", "64k", filePath)...).CombinedOutput()
		if err != nil {
			fileErr = fmt.Errorf("ffmpeg: %w\n%s", err, out)
		}
	})
	if fileErr != nil {
		t.Fatal(fileErr)
	}
	return filePath
}

// collect reads s in the background until the returned stop is called, which returns what
// was read.
func collect(t *testing.T, s *stream.Stream) func() []*media.AccessUnit {
	c := streamtest.Collect(t, s)
	return func() []*media.AccessUnit { c.Stop(); return c.Snapshot() }
}

// checkMedia checks the tracks and that DTS increases per track.
func checkMedia(t *testing.T, s *stream.Stream, aus []*media.AccessUnit, minUnits int) {
	t.Helper()
	tracks := s.Tracks()
	if len(tracks) != 2 || tracks[0].Codec != media.CodecH264 || tracks[1].Codec != media.CodecAAC ||
		tracks[0].Params.Width != 640 || tracks[0].Params.Height != 360 {
		t.Fatalf("tracks %+v", tracks)
	}
	if len(aus) < minUnits {
		t.Fatalf("%d units, want at least %d", len(aus), minUnits)
	}
	if !aus[0].Key {
		t.Error("first unit is not a key frame")
	}
	last := map[int]int64{}
	for i, au := range aus {
		if l, ok := last[au.Track]; ok && au.DTS <= l {
			t.Fatalf("unit %d track %d: DTS %d after %d", i, au.Track, au.DTS, l)
		}
		last[au.Track] = au.DTS
	}
}

// TestRunFile is not parallel: it measures rates.
func TestRunFile(t *testing.T) {
	ffmpeg := testutil.RequireFFmpeg(t)
	path := sourceFile(t)
	s := stream.New("file", stream.Options{})
	stop := collect(t, s)
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- Run(context.Background(), s, Options{FFmpeg: ffmpeg, Address: path}) }()
	checkRates(t, s, srcKbps, 25)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 5*time.Second {
		t.Errorf("6 s file done in %s: not read at its pace", took)
	}
	checkMedia(t, s, stop(), 6*25)
	if s.Publishing() {
		t.Error("still publishing after Run returned")
	}
}

func TestRunHTTP(t *testing.T) {
	ffmpeg := testutil.RequireFFmpeg(t)
	path := sourceFile(t)
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, path)
	}))
	defer srv.Close()
	s := stream.New("http", stream.Options{})
	stop := collect(t, s)
	if err := Run(context.Background(), s, Options{FFmpeg: ffmpeg, Address: srv.URL + "/src.mp4"}); err != nil {
		t.Fatal(err)
	}
	checkMedia(t, s, stop(), 6*25)
}

func TestRunFailures(t *testing.T) {
	ffmpeg := testutil.RequireFFmpeg(t)
	t.Parallel()
	s := stream.New("fail", stream.Options{})
	err := Run(context.Background(), s, Options{FFmpeg: ffmpeg, Address: filepath.Join(t.TempDir(), "missing.ts")})
	if err == nil || !strings.Contains(err.Error(), "No such file") {
		t.Errorf("missing file: %v", err)
	}
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	secret := strings.Replace(srv.URL, "http://", "http://user:s3cret@", 1) + "/x.ts"
	err = Run(context.Background(), s, Options{FFmpeg: ffmpeg, Address: secret})
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("404 with credentials: %v", err)
	}
	t.Log(err)
}

func TestRunCancel(t *testing.T) {
	ffmpeg := testutil.RequireFFmpeg(t)
	path := sourceFile(t)
	t.Parallel()
	s := stream.New("cancel", stream.Options{})
	run := testutil.Go(t, func(ctx context.Context) error { return Run(ctx, s, Options{FFmpeg: ffmpeg, Address: path}) })
	testutil.Eventually(t, 20*time.Second, "publishing", s.Publishing)
	run.Stop(t, 10*time.Second)
	if s.Publishing() {
		t.Error("still publishing")
	}
}

// TestRunNoSecret: an address with a password and a query token, which ffmpeg cannot open (a
// 404, a closed port) or which is refused before: neither the error nor any line logged (debug
// included: ffmpeg's arguments and stderr) shows a secret.
func TestRunNoSecret(t *testing.T) {
	ffmpeg := testutil.RequireFFmpeg(t)
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	const password, token = "pa55S3cret", "tok3nS3cret"
	secrets := func(base string) string {
		return strings.Replace(base, "http://", "http://user:"+password+"@", 1) + "/x.ts?token=" + token
	}
	for _, address := range []string{
		secrets(srv.URL),
		secrets(fmt.Sprintf("http://127.0.0.1:%d", testutil.FreePort(t))),
		secrets(srv.URL) + "\n",
	} {
		testutil.FailsKeeping(t, time.Minute, func(ctx context.Context, log *slog.Logger) error {
			return Run(ctx, stream.New("secret", stream.Options{}), Options{FFmpeg: ffmpeg, Address: address, Log: log})
		}, password, token)
	}
}
