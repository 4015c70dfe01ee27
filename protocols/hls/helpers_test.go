package hls

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/packager/nal"
)

// Source of the end-to-end tests: 640x360 at 25 fps, a key frame every 2 s (one per
// segment), constant bitrate, and 64 kbit/s AAC.
const (
	srcWidth, srcHeight = 640, 360
	srcVideoKbps        = 1000
	srcAudioKbps        = 64
)

// encodeArgs returns ffmpeg's input and encoding arguments for a paced test source; codec is
// libx264 or libx265.
func encodeArgs(codec string) []string {
	b := strconv.Itoa(srcVideoKbps) + "k"
	a := []string{
		"-re", "-f", "lavfi", "-i", fmt.Sprintf("testsrc2=size=%dx%d:rate=25", srcWidth, srcHeight),
		"-re", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
		"-c:v", codec, "-preset", "ultrafast", "-pix_fmt", "yuv420p",
		"-b:v", b, "-maxrate", b, "-bufsize", strconv.Itoa(srcVideoKbps/2) + "k",
		"-g", "50", "-keyint_min", "50", "-sc_threshold", "0",
		"-c:a", "aac", "-b:a", strconv.Itoa(srcAudioKbps) + "k",
	}
	if codec == "libx264" {
		a = append(a, "-tune", "zerolatency", "-minrate", b, "-x264-params", "nal-hrd=cbr")
	} else {
		a = append(a, "-tag:v", "hvc1", "-x265-params", "log-level=error")
	}
	return a
}

// hlsArgs are the HLS muxer's arguments; fmp4 selects fMP4 segments.
func hlsArgs(fmp4 bool) []string {
	a := []string{"-f", "hls", "-hls_time", "2", "-hls_list_size", "6", "-hls_flags", "delete_segments"}
	if fmp4 {
		a = append(a, "-hls_segment_type", "fmp4")
	}
	return a
}

// serve serves dir over HTTP until the test ends.
func serve(t testing.TB, dir string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	return srv
}

// waitFile waits for path to exist.
func waitFile(t testing.TB, path string) {
	t.Helper()
	testutil.Eventually(t, 60*time.Second, "ffmpeg writes "+path, func() bool {
		_, err := os.Stat(path)
		return err == nil
	})
}

// pullAsync runs Pull in the background until it returns or the test ends; the result
// arrives on the channel.
func pullAsync(t testing.TB, url string, s *stream.Stream) <-chan error {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
	ch, fin := make(chan error, 1), make(chan struct{})
	go func() {
		defer close(fin)
		ch <- Pull(ctx, url, s, testLog())
	}()
	t.Cleanup(func() { cancel(); <-fin })
	return ch
}

func testLog() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.DiscardHandler)
}

// waitTracks waits for the stream to have tracks.
func waitTracks(t testing.TB, s *stream.Stream, d time.Duration) []media.Track {
	t.Helper()
	testutil.Eventually(t, d, "tracks", func() bool { return len(s.Tracks()) > 0 })
	return s.Tracks()
}

// collector reads a stream in the background and keeps what it saw.
type collector struct {
	mu     sync.Mutex
	units  []*media.AccessUnit
	cancel context.CancelFunc
	done   chan struct{}
}

func collect(t testing.TB, s *stream.Stream) *collector {
	t.Helper()
	r, err := s.NewReader("test")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &collector{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		defer r.Close()
		for {
			au, err := r.Read(ctx)
			if err != nil {
				return
			}
			c.mu.Lock()
			c.units = append(c.units, au)
			c.mu.Unlock()
		}
	}()
	t.Cleanup(c.stop)
	return c
}

func (c *collector) stop() { c.cancel(); <-c.done }

func (c *collector) snapshot() []*media.AccessUnit {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*media.AccessUnit(nil), c.units...)
}

// checkUnits checks, per session: the first video unit is a key frame carrying its parameter
// sets, every key frame carries them, DTS strictly increases per track, PTS ≥ DTS.
func checkUnits(t testing.TB, tracks []media.Track, aus []*media.AccessUnit) {
	t.Helper()
	last := map[int]int64{}
	seenVideo := false
	for i, au := range aus {
		if au.Discontinuity {
			clear(last)
			seenVideo = false
		}
		tr := tracks[au.Track]
		if tr.Codec.IsVideo() {
			if !seenVideo && !au.Key {
				t.Fatalf("unit %d: first video unit is not a key frame", i)
			}
			seenVideo = true
			if au.Key && !hasParams(tr.Codec, au.Payload) {
				t.Fatalf("unit %d: key frame without parameter sets", i)
			}
			for _, n := range au.Payload {
				if len(n) > 0 && isAUD(tr.Codec, n) {
					t.Fatalf("unit %d: AUD not dropped", i)
				}
			}
		}
		if prev, ok := last[au.Track]; ok && au.DTS <= prev {
			t.Fatalf("unit %d track %d: DTS %d after %d", i, au.Track, au.DTS, prev)
		}
		if au.PTS < au.DTS {
			t.Fatalf("unit %d: PTS %d < DTS %d", i, au.PTS, au.DTS)
		}
		last[au.Track] = au.DTS
	}
}

func hasParams(c media.Codec, nalus [][]byte) bool {
	seen := map[nal.Kind]bool{}
	for _, n := range nalus {
		seen[nal.Classify(c, n)] = true
	}
	if c == media.CodecH265 {
		return seen[nal.VPS] && seen[nal.SPS] && seen[nal.PPS]
	}
	return seen[nal.SPS] && seen[nal.PPS]
}

func isAUD(c media.Codec, n []byte) bool { return nal.Classify(c, n) == nal.AUD }

// meanBitrate samples the stream's reported bitrate every 200 ms for d and returns the mean,
// in kbit/s.
func meanBitrate(s *stream.Stream, d time.Duration) float64 {
	var sum float64
	var n int
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		sum += s.Stats().Bitrate
		n++
	}
	return sum / float64(n)
}

// sourceKbps measures the elementary-stream bitrate of the segments a live playlist lists now:
// it copies the playlist and its files aside (ffmpeg deletes old segments) and sums the packet
// sizes ffprobe reports over the playlist's duration.
func sourceKbps(t testing.TB, dir, name string) float64 {
	t.Helper()
	snap := t.TempDir()
	pl, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	var dur float64
	sc := bufio.NewScanner(strings.NewReader(string(pl)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "#EXTINF:"):
			v, _ := strconv.ParseFloat(strings.TrimSuffix(strings.SplitN(line[8:], ",", 2)[0], ","), 64)
			dur += v
		case strings.HasPrefix(line, "#EXT-X-MAP:URI=\""):
			copyFile(t, dir, snap, strings.TrimSuffix(strings.TrimPrefix(line, "#EXT-X-MAP:URI=\""), "\""))
		case line != "" && !strings.HasPrefix(line, "#"):
			copyFile(t, dir, snap, line)
		}
	}
	// Ended, so that ffprobe reads the copy once instead of waiting for it to grow.
	pl = append(pl, "\n#EXT-X-ENDLIST\n"...)
	if err := os.WriteFile(filepath.Join(snap, name), pl, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ffprobe", "-v", "error", "-allowed_extensions", "ALL",
		"-show_entries", "packet=size", "-of", "default=nw=1:nk=1", filepath.Join(snap, name)).Output()
	if err != nil {
		t.Fatalf("ffprobe: %v", err)
	}
	var bytes int64
	for _, line := range strings.Split(string(out), "\n") {
		if n, err := strconv.ParseInt(strings.TrimSpace(line), 10, 64); err == nil {
			bytes += n
		}
	}
	if dur <= 0 {
		t.Fatalf("playlist %s lists no duration", name)
	}
	return float64(bytes) * 8 / 1000 / dur
}

func copyFile(t testing.TB, from, to, name string) {
	t.Helper()
	src, err := os.Open(filepath.Join(from, name))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(filepath.Join(to, name))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
}

// baseline counts goroutines and open file descriptors.
type baseline struct{ goroutines, fds int }

func takeBaseline() baseline { return baseline{runtime.NumGoroutine(), countFDs()} }

func countFDs() int {
	ents, _ := os.ReadDir("/proc/self/fd")
	return len(ents)
}

// checkBaseline waits for goroutines and descriptors to come back to b.
func checkBaseline(t testing.TB, b baseline) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		g, f := runtime.NumGoroutine(), countFDs()
		if g <= b.goroutines && f <= b.fds {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("goroutines %d (baseline %d), fds %d (baseline %d)\n%s", g, b.goroutines, f, b.fds, buf)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// within fails unless got is within tol (a fraction) of want.
func within(t testing.TB, what string, got, want, tol float64) {
	t.Helper()
	if got < want*(1-tol) || got > want*(1+tol) {
		t.Errorf("%s: %.0f, want %.0f ± %.0f%%", what, got, want, tol*100)
	}
}
