package udp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/sluicemedia/sluice/internal/testutil"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/ingest"
	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/packager/mpegts"
)

// requireFFmpeg returns the path of ffmpeg, skipping the test when it is not installed.
func requireFFmpeg(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("ffmpeg")
	if err != nil {
		testutil.RequireFFmpeg(t) // skips outside CI, fails in CI
		t.Fatalf("ffmpeg not found in PATH: install ffmpeg to run this end-to-end test")
	}
	if _, err := exec.LookPath("ffprobe"); err != nil {
		testutil.RequireFFmpeg(t) // skips outside CI, fails in CI
		t.Fatalf("ffprobe not found in PATH: install ffmpeg to run this end-to-end test")
	}
	return p
}

// Source of the end-to-end tests: a constant-bitrate H.264 + AAC stream.
const (
	srcWidth, srcHeight = 640, 360
	srcVideoKbps        = 1000
	srcAudioKbps        = 64
)

// cbrArgs are ffmpeg's input and encoding arguments for the test source.
func cbrArgs(seconds float64, realtime bool) []string {
	var a []string
	re := func() {
		if realtime {
			a = append(a, "-re")
		}
	}
	a = append(a, "-hide_banner", "-loglevel", "error", "-nostdin")
	re()
	a = append(a, "-f", "lavfi", "-i", fmt.Sprintf("testsrc2=size=%dx%d:rate=25", srcWidth, srcHeight))
	re()
	a = append(a, "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
		"-t", fmt.Sprint(seconds),
		"-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-pix_fmt", "yuv420p",
		"-b:v", fmt.Sprintf("%dk", srcVideoKbps), "-minrate", fmt.Sprintf("%dk", srcVideoKbps),
		"-maxrate", fmt.Sprintf("%dk", srcVideoKbps), "-bufsize", "500k", "-x264-params", "nal-hrd=cbr",
		"-g", "25", "-c:a", "aac", "-b:a", fmt.Sprintf("%dk", srcAudioKbps))
	return a
}

var tsFiles sync.Map // seconds → path

// makeTS returns an MPEG-TS file of the test source, made once per test binary.
func makeTS(t testing.TB, seconds float64) string {
	t.Helper()
	ffmpeg := requireFFmpeg(t)
	if p, ok := tsFiles.Load(seconds); ok {
		return p.(string)
	}
	dir, err := os.MkdirTemp("", "udp-test-")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "src.ts")
	args := append(cbrArgs(seconds, false), "-f", "mpegts", out)
	if b, err := exec.Command(ffmpeg, args...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, b)
	}
	p, _ := tsFiles.LoadOrStore(seconds, out)
	return p.(string)
}

// readTS demuxes a whole file.
func readTS(t testing.TB, path string) ([]media.Track, []*media.AccessUnit) {
	t.Helper()
	tracks, aus, err := mpegts.ReadFile(path)
	if err != nil {
		t.Fatalf("demux %s: %v", path, err)
	}
	return tracks, aus
}

// play publishes units into s, in real time when realtime is set, looping loops times with
// timestamps shifted to keep increasing. It closes the publisher at the end.
func play(ctx context.Context, s *stream.Stream, tracks []media.Track, aus []*media.AccessUnit, realtime bool, loops int) error {
	pub, err := s.Publish()
	if err != nil {
		return err
	}
	defer pub.Close()
	if err := pub.SetTracks(tracks); err != nil {
		return err
	}
	at90 := func(au *media.AccessUnit) int64 {
		return media.Rescale(au.DTS, tracks[au.Track].ClockRate, 90000)
	}
	first, end := at90(aus[0]), int64(0)
	for _, au := range aus {
		end = max(end, at90(au))
	}
	span := end - first + 3600 // one loop, at 90 kHz
	start := time.Now()
	for l := range loops {
		for _, au := range aus {
			c := *au
			off := media.Rescale(int64(l)*span, 90000, tracks[au.Track].ClockRate)
			c.DTS += off
			c.PTS += off
			if realtime {
				at := start.Add(time.Duration(at90(&c)-first) * time.Second / 90000)
				select {
				case <-time.After(time.Until(at)):
				case <-ctx.Done():
					return nil
				}
			}
			c.Arrival = time.Now()
			if err := pub.Write(&c); err != nil {
				return err
			}
		}
	}
	return nil
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

// checkUnits checks DTS monotonic per track within each session, PTS ≥ DTS, and that each
// session's first video unit is a key frame.
func checkUnits(t testing.TB, tracks []media.Track, aus []*media.AccessUnit) {
	t.Helper()
	last := map[int]int64{}
	seenVideo := false
	for i, au := range aus {
		if au.Discontinuity {
			clear(last)
			seenVideo = false
		}
		if au.Track >= len(tracks) {
			t.Fatalf("unit %d of track %d, %d tracks", i, au.Track, len(tracks))
		}
		if l, ok := last[au.Track]; ok && au.DTS <= l {
			t.Fatalf("unit %d track %d: DTS %d after %d", i, au.Track, au.DTS, l)
		}
		last[au.Track] = au.DTS
		if au.PTS < au.DTS {
			t.Fatalf("unit %d track %d: PTS %d < DTS %d", i, au.Track, au.PTS, au.DTS)
		}
		if tracks[au.Track].Codec.IsVideo() && !seenVideo {
			if !au.Key {
				t.Fatalf("unit %d: first video unit of a session is not a key frame", i)
			}
			seenVideo = true
		}
	}
}

// checkSourceTracks checks the tracks are the test source's: H.264 640x360 and AAC.
func checkSourceTracks(t testing.TB, tracks []media.Track) {
	t.Helper()
	if len(tracks) != 2 || tracks[0].Codec != media.CodecH264 || tracks[1].Codec != media.CodecAAC {
		t.Fatalf("tracks %s, want H264 and AAC", ingest.Describe(tracks))
	}
	if p := tracks[0].Params; p.Width != srcWidth || p.Height != srcHeight {
		t.Fatalf("video %dx%d, want %dx%d", p.Width, p.Height, srcWidth, srcHeight)
	}
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// freeUDPPort returns a UDP port that was free a moment ago.
func freeUDPPort(t testing.TB) int {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// runFFmpeg runs ffmpeg with args until it exits or ctx ends.
func runFFmpeg(ctx context.Context, t testing.TB, args ...string) error {
	cmd := exec.CommandContext(ctx, requireFFmpeg(t), args...)
	out, err := cmd.CombinedOutput()
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("ffmpeg %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// ffprobeCodecs returns the codec names of a file's streams.
func ffprobeCodecs(t testing.TB, path string) []string {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-show_entries", "stream=codec_name",
		"-of", "json", path).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("ffprobe %s: %v\n%s", path, err, ee.Stderr)
		}
		t.Fatalf("ffprobe %s: %v", path, err)
	}
	var res struct {
		Streams []struct {
			CodecName string `json:"codec_name"`
		}
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("ffprobe %s: %v", path, err)
	}
	var codecs []string
	for _, s := range res.Streams {
		codecs = append(codecs, s.CodecName)
	}
	return codecs
}

// resources counts goroutines and open file descriptors.
func resources() (goroutines, fds int) {
	ents, _ := os.ReadDir("/proc/self/fd")
	return runtime.NumGoroutine(), len(ents)
}

// waitBaseline waits for the goroutine and descriptor counts to come back to a baseline.
func waitBaseline(t testing.TB, g0, f0 int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		g, f := resources()
		if g <= g0 && f <= f0 {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("goroutines %d (baseline %d), fds %d (baseline %d)\n%s", g, g0, f, f0, buf[:n])
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkRates samples the stream's bitrate and fps every 250 ms once the publisher has sent
// for 3 s, until it stops or 20 s pass, and passes when one sample is within 15 % of both
// wants: on a loaded machine a starved encoder can run below real time for a while.
func checkRates(t testing.TB, s *stream.Stream, wantKbps, wantFPS float64) {
	t.Helper()
	waitFor(t, 30*time.Second, "3 s of media", func() bool {
		st := s.Stats()
		return st.Publishing && time.Since(st.Since) > 3*time.Second
	})
	deadline := time.Now().Add(20 * time.Second)
	var best stream.Stats
	bestErr := math.Inf(1)
	for time.Now().Before(deadline) {
		st := s.Stats()
		if !st.Publishing {
			break
		}
		e := max(math.Abs(st.Bitrate-wantKbps)/wantKbps, math.Abs(st.FPS-wantFPS)/wantFPS)
		if e < bestErr {
			best, bestErr = st, e
		}
		if e <= 0.15 {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("bitrate %.0f kbit/s (want %.0f), fps %.1f (want %.0f)", best.Bitrate, wantKbps, best.FPS, wantFPS)
	if bestErr > 0.15 {
		t.Errorf("bitrate %.0f kbit/s and fps %.1f, want %.0f and %.0f ± 15 %%", best.Bitrate, best.FPS, wantKbps, wantFPS)
	}
}
