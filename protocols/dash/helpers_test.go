package dash

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
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

// dashArgs are the DASH muxer's arguments; timeline selects SegmentTimeline addressing
// (else $Number$ from availabilityStartTime).
func dashArgs(timeline bool) []string {
	tl := "0"
	if timeline {
		tl = "1"
	}
	return []string{"-f", "dash", "-seg_duration", "2", "-window_size", "6", "-use_template", "1",
		"-use_timeline", tl, "-streaming", "0"}
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

// sourceKbps measures the elementary-stream bitrate of the last five complete segments ffmpeg
// wrote (the ones the measurement of the stream overlaps): per stream, the init segment and the
// chunks joined into one fragmented MP4, whose packet sizes and durations ffprobe reports.
func sourceKbps(t testing.TB, dir string) float64 {
	t.Helper()
	snap := t.TempDir()
	var total float64
	for stream := 0; ; stream++ {
		init := filepath.Join(dir, fmt.Sprintf("init-stream%d.m4s", stream))
		if _, err := os.Stat(init); err != nil {
			break
		}
		chunks, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf("chunk-stream%d-*.m4s", stream)))
		sort.Strings(chunks)
		chunks = chunks[max(len(chunks)-5, 0):]
		joined := filepath.Join(snap, fmt.Sprintf("s%d.mp4", stream))
		out, err := os.Create(joined)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range append([]string{init}, chunks...) {
			b, err := os.ReadFile(f)
			if err != nil {
				continue // deleted meanwhile: its successor follows
			}
			_, _ = out.Write(b)
		}
		out.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		res, err := exec.CommandContext(ctx, "ffprobe", "-v", "error", "-show_entries", "packet=size,duration_time",
			"-of", "csv=p=0", joined).Output()
		cancel()
		if err != nil {
			t.Fatalf("ffprobe: %v", err)
		}
		var bytes int64
		var secs float64
		for _, line := range strings.Split(string(res), "\n") {
			f := strings.Split(strings.TrimSpace(line), ",")
			if len(f) < 2 {
				continue
			}
			d, err1 := strconv.ParseFloat(f[0], 64)
			n, err2 := strconv.ParseInt(f[1], 10, 64)
			if err1 == nil && err2 == nil {
				bytes += n
				secs += d
			}
		}
		if secs <= 0 {
			t.Fatalf("stream %d: no packets", stream)
		}
		total += float64(bytes) * 8 / 1000 / secs
	}
	return total
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
