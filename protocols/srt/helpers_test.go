package srt

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/procfs"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/tooling"
	"github.com/sluicemedia/sluice/protocols/internal/ingest"
	"github.com/sluicemedia/sluice/protocols/srt/link"
)

// The constant-bitrate source of the end-to-end tests: 1000 kbit/s H.264 and 64 kbit/s AAC.
const sourceKbps = 1000 + 64

// sourceArgs is the test source (testutil's pattern and encoding at 1000 kbit/s), read as fast
// as ffmpeg can.
var sourceArgs = append(testutil.Pattern{}.Args(), testutil.Encode(1000)...)

// testLog returns a logger for the code under test: its lines go to the test output when the
// test fails (at once when SRT_TEST_LOG is set).
func testLog(t testing.TB) *slog.Logger {
	opts := &slog.HandlerOptions{Level: slog.LevelDebug}
	if os.Getenv("SRT_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(t.Output(), opts))
	}
	buf := &testutil.SyncBuffer{Max: 64 << 10}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("log of the code under test:\n%s", buf.String())
		}
	})
	return slog.New(slog.NewTextHandler(buf, opts))
}

// portOf returns the port of a listening address.
func portOf(a net.Addr) int { return a.(*net.UDPAddr).Port }

// dialSRT calls the SRT listener at addr with o (stream ID, latency, buffers) and fails the
// test when it cannot.
func dialSRT(t testing.TB, addr string, o Options) *link.Conn {
	t.Helper()
	conf, err := o.config()
	if err != nil {
		t.Fatal(err)
	}
	c, err := link.Dial(context.Background(), addr, conf)
	if err != nil {
		t.Fatalf("dial %s: %v", o.StreamID, err)
	}
	return c
}

// ffmpegProc is an ffmpeg child with its output kept for failure messages.
type ffmpegProc struct {
	cmd  *exec.Cmd
	out  *testutil.SyncBuffer
	done chan struct{}
	err  error
}

// startFFmpeg starts ffmpeg with args; it is killed when the test ends.
func startFFmpeg(t testing.TB, args ...string) *ffmpegProc {
	t.Helper()
	full := append([]string{"-hide_banner", "-nostdin", "-loglevel", "warning", "-y"}, args...)
	return startProcess(t, "ffmpeg", full...)
}

// startProcess starts bin with args; it is stopped (SIGINT, then SIGKILL) when the test ends.
func startProcess(t testing.TB, bin string, args ...string) *ffmpegProc {
	t.Helper()
	p := &ffmpegProc{cmd: exec.Command(bin, args...), out: &testutil.SyncBuffer{Max: 64 << 10}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // stop signals the group
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(p.stop)
	return p
}

// publish starts an ffmpeg publisher of the CBR source to url for secs seconds.
func publish(t testing.TB, url string, secs int) *ffmpegProc {
	t.Helper()
	args := append([]string{"-re"}, sourceArgs...)
	args = append(args, "-t", strconv.Itoa(secs), "-f", "mpegts", url)
	return startFFmpeg(t, args...)
}

// stop ends ffmpeg (SIGINT, then SIGKILL after 5 s) and waits for it.
func (p *ffmpegProc) stop() {
	if !p.exited() {
		tooling.StopGroup(p.cmd.Process.Pid, p.done, syscall.SIGINT, 5*time.Second)
	}
}

// wait waits up to d for ffmpeg to exit and returns its error.
func (p *ffmpegProc) wait(t testing.TB, d time.Duration) error {
	t.Helper()
	select {
	case <-p.done:
		return p.err
	case <-time.After(d):
		t.Fatalf("ffmpeg still running after %v; output:\n%s", d, p.out.String())
		return nil
	}
}

// exited tells whether ffmpeg has exited.
func (p *ffmpegProc) exited() bool { return tooling.Closed(p.done) }

// stopAndCheck stops the part under test with stop, failing the test on its error, and checks
// that its goroutines and descriptors are gone (base).
func stopAndCheck(t *testing.T, stop func() error, base testutil.Baseline) {
	t.Helper()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	base.Check(t, 15*time.Second)
}

// waitReceivers waits until srv has one stream, with n receivers.
func waitReceivers(t *testing.T, srv *Server, n int, d time.Duration, what string) {
	t.Helper()
	testutil.Eventually(t, d, what, func() bool {
		list := srv.ActiveStreams()
		return len(list) == 1 && list[0].Receivers == n
	})
}

type probeStream struct {
	CodecName string `json:"codec_name"`
	CodecType string `json:"codec_type"`
	Width     int    `json:"width"`
	Height    int    `json:"height"`
}

// ffprobe returns the streams ffprobe finds in path.
func ffprobe(t testing.TB, path string) []probeStream {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-show_streams", "-of", "json", path).Output()
	if err != nil {
		t.Fatalf("ffprobe %s: %v", path, err)
	}
	var res struct{ Streams []probeStream }
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("ffprobe output: %v", err)
	}
	return res.Streams
}

// requireH264AAC fails unless path holds 640x360 H.264 and AAC.
func requireH264AAC(t testing.TB, path string) {
	t.Helper()
	var v, a bool
	for _, s := range ffprobe(t, path) {
		switch s.CodecName {
		case "h264":
			v = s.Width == 640 && s.Height == 360
		case "aac":
			a = true
		}
	}
	if !v || !a {
		t.Fatalf("%s: want 640x360 h264 and aac, ffprobe found %+v", path, ffprobe(t, path))
	}
}

// requireTracks fails unless tracks are the source's: H.264 640x360 and AAC 48 kHz.
func requireTracks(t testing.TB, tracks []media.Track) {
	t.Helper()
	if len(tracks) != 2 || tracks[0].Codec != media.CodecH264 || tracks[1].Codec != media.CodecAAC ||
		tracks[0].Params.Width != 640 || tracks[0].Params.Height != 360 || tracks[1].ClockRate != 48000 {
		t.Fatalf("tracks %s, want H264 640x360 and AAC 48000Hz", ingest.Describe(tracks))
	}
	if tracks[0].Params.SPS == nil || tracks[0].Params.PPS == nil {
		t.Fatal("video track without parameter sets")
	}
}

// checkUnits reads s for d and fails unless DTS increases per track and the first video unit is
// a key frame. It returns the number of units read.
func checkUnits(t testing.TB, s *stream.Stream, d time.Duration) int {
	t.Helper()
	r, err := s.NewReader("test")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	last := map[int]int64{}
	sawVideo := false
	n := 0
	for {
		au, err := r.Read(ctx)
		if err != nil {
			return n
		}
		n++
		if prev, ok := last[au.Track]; ok && au.DTS <= prev {
			t.Fatalf("track %d: DTS %d after %d", au.Track, au.DTS, prev)
		}
		last[au.Track] = au.DTS
		if au.PTS < au.DTS {
			t.Fatalf("track %d: PTS %d before DTS %d", au.Track, au.PTS, au.DTS)
		}
		if au.Track == 0 && !sawVideo {
			sawVideo = true
			if !au.Key {
				t.Fatal("first video unit is not a key frame")
			}
		}
	}
}

// withinPct reports whether got is within pct percent of want.
func withinPct(got, want, pct float64) bool {
	return got >= want*(1-pct/100) && got <= want*(1+pct/100)
}

// netSplit splits "host:port".
func netSplit(hp string) (string, string, error) { return net.SplitHostPort(hp) }

// waitUDPBound waits until a socket is bound to the UDP port (ffmpeg's, when p is given, or
// one of this test's). It reads the kernel's socket table: binding the port to probe it would
// race the socket it waits for, which then fails with "address in use".
func waitUDPBound(t testing.TB, port int, p *ffmpegProc) {
	t.Helper()
	testutil.Eventually(t, 20*time.Second, fmt.Sprintf("a socket on UDP port %d", port), func() bool {
		if p != nil && p.exited() {
			t.Fatalf("ffmpeg exited: %v\n%s", p.err, p.out.String())
		}
		socks, err := procfs.Sockets("udp")
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(socks, func(s procfs.Socket) bool { return s.Port == port })
	})
}
