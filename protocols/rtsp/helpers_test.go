package rtsp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os/exec"
	"path/filepath"
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

// testLog returns a logger that writes into the test's log while the test runs.
func testLog(t testing.TB) *slog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type testWriter struct {
	t    testing.TB
	mu   sync.Mutex
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

// runningServer is a Server running in the background for one test.
type runningServer struct {
	srv  *Server
	strm *stream.Stream
	url  string // rtsp://127.0.0.1:port/live
	stop func() error
}

// startServer listens on a loopback port from :0 and runs until the test ends.
func startServer(t testing.TB, cfg ListenOptions) *runningServer {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Log == nil {
		cfg.Log = testLog(t)
	}
	srv, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	strm := stream.New("rtsp-test", stream.Options{Log: cfg.Log})
	run := testutil.Run(t, func(ctx context.Context) error { return srv.Run(ctx, strm) })
	stop := func() error {
		err := run()
		strm.Close()
		return err
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("server Run: %v", err)
		}
	})
	return &runningServer{srv: srv, strm: strm, url: "rtsp://" + srv.Addr().String() + "/live", stop: stop}
}

// Source settings: a constant-bitrate test pattern and tone.
const (
	srcWidth, srcHeight = 640, 360
	srcVideoKbps        = 1000
	srcAudioKbps        = 64
)

// sourceArgs are ffmpeg's input and encoding arguments for a live source of the given codecs
// (libx264, libx265; aac, libmp3lame, libopus).
// A "+bf" suffix on the video codec asks for B-frames (two between references).
func sourceArgs(vcodec, acodec string) []string {
	tune := []string{"-preset", "ultrafast", "-tune", "zerolatency"}
	if c, ok := strings.CutSuffix(vcodec, "+bf"); ok {
		vcodec, tune = c, []string{"-preset", "veryfast", "-bf", "2"}
	}
	args := append(testutil.Pattern{Width: srcWidth, Height: srcHeight, Realtime: true}.Args(),
		"-c:v", vcodec, "-pix_fmt", "yuv420p",
		"-b:v", fmt.Sprintf("%dk", srcVideoKbps), "-minrate", fmt.Sprintf("%dk", srcVideoKbps),
		"-maxrate", fmt.Sprintf("%dk", srcVideoKbps), "-bufsize", fmt.Sprintf("%dk", srcVideoKbps/2), "-g", "25")
	args = append(args, tune...)
	switch vcodec {
	case "libx264":
		args = append(args, "-x264-params", "nal-hrd=cbr")
	case "libx265":
		args = append(args, "-x265-params", "log-level=error")
	}
	args = append(args, "-c:a", acodec, "-b:a", fmt.Sprintf("%dk", srcAudioKbps))
	return args
}

// startPublisher runs ffmpeg publishing for seconds to url over transport (tcp or udp).
func startPublisher(t testing.TB, url, transport, vcodec, acodec string, seconds int) *testutil.Child {
	t.Helper()
	ffmpeg := testutil.RequireFFmpeg(t)
	args := []string{"-hide_banner", "-loglevel", "error", "-nostdin"}
	args = append(args, sourceArgs(vcodec, acodec)...)
	args = append(args, "-t", strconv.Itoa(seconds), "-f", "rtsp", "-rtsp_transport", transport, url)
	return testutil.StartChild(t, ffmpeg, args...)
}

// collector reads a Stream and checks each unit as it comes.
type collector struct {
	mu       sync.Mutex
	units    map[int]int
	bytes    int64
	keys     int
	first    map[int]*media.AccessUnit
	lastDTS  map[int]int64
	problems []string
	discs    int
	// reordered counts video units presented after their decoding time: B-frames' references.
	reordered int
}

// collect reads strm until the test ends.
func collect(t testing.TB, strm *stream.Stream) *collector {
	t.Helper()
	r, err := strm.NewReader("test")
	if err != nil {
		t.Fatal(err)
	}
	c := &collector{units: map[int]int{}, first: map[int]*media.AccessUnit{}, lastDTS: map[int]int64{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			au, err := r.Read(ctx)
			if err != nil {
				return
			}
			c.add(strm, au)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		r.Close()
	})
	return c
}

func (c *collector) add(strm *stream.Stream, au *media.AccessUnit) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if au.Discontinuity {
		c.discs++
		clear(c.first)
		clear(c.lastDTS)
	}
	tracks := strm.Tracks()
	if au.Track >= len(tracks) {
		c.problems = append(c.problems, fmt.Sprintf("unit of track %d with %d tracks", au.Track, len(tracks)))
		return
	}
	video := tracks[au.Track].Codec.IsVideo()
	if c.first[au.Track] == nil {
		c.first[au.Track] = au
		if video && !au.Key {
			c.problems = append(c.problems, "first video unit is not a key frame")
		}
	} else if last := c.lastDTS[au.Track]; au.DTS <= last {
		c.problems = append(c.problems, fmt.Sprintf("track %d: DTS %d after %d", au.Track, au.DTS, last))
	}
	if au.PTS < au.DTS {
		c.problems = append(c.problems, fmt.Sprintf("track %d: PTS %d before DTS %d", au.Track, au.PTS, au.DTS))
	}
	if video && au.Key && !hasParamSets(tracks[au.Track].Codec, au.Payload) {
		c.problems = append(c.problems, "key frame without parameter sets")
	}
	for _, n := range au.Payload {
		if video && len(n) > 0 && nal.Classify(tracks[au.Track].Codec, n) == nal.AUD {
			c.problems = append(c.problems, "AUD in a unit")
		}
	}
	if video && au.PTS > au.DTS {
		c.reordered++
	}
	c.lastDTS[au.Track] = au.DTS
	c.units[au.Track]++
	c.bytes += int64(au.Size())
	if video && au.Key {
		c.keys++
	}
}

func hasParamSets(c media.Codec, payload [][]byte) bool {
	var vps, sps, pps bool
	for _, n := range payload {
		if len(n) == 0 {
			continue
		}
		switch nal.Classify(c, n) {
		case nal.VPS:
			vps = true
		case nal.SPS:
			sps = true
		case nal.PPS:
			pps = true
		}
	}
	return sps && pps && (vps || c != media.CodecH265)
}

// count returns the units of a track seen so far.
func (c *collector) count(track int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.units[track]
}

// counts returns a copy of the units per track.
func (c *collector) counts() map[int]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.units)
}

// check fails the test on any problem seen.
func (c *collector) check(t testing.TB) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, p := range c.problems {
		if i == 10 {
			t.Errorf("... and %d more", len(c.problems)-10)
			break
		}
		t.Error(p)
	}
}

// waitTracks waits until strm has n tracks from a publisher.
func waitTracks(t testing.TB, strm *stream.Stream, n int) []media.Track {
	t.Helper()
	testutil.Eventually(t, 20*time.Second, fmt.Sprintf("%d tracks", n), func() bool {
		return strm.Publishing() && len(strm.Tracks()) == n
	})
	return strm.Tracks()
}

// checkAV checks a video track of the source's size and an audio track.
func checkAV(t testing.TB, tracks []media.Track, video, audio media.Codec) {
	t.Helper()
	if len(tracks) != 2 {
		t.Fatalf("tracks = %+v, want 2", tracks)
	}
	v, a := tracks[0], tracks[1]
	if v.Codec != video || v.ClockRate != 90000 || v.Params.Width != srcWidth || v.Params.Height != srcHeight {
		t.Errorf("video track = %s %d Hz %dx%d, want %s 90000 Hz %dx%d", v.Codec, v.ClockRate,
			v.Params.Width, v.Params.Height, video, srcWidth, srcHeight)
	}
	if len(v.Params.SPS) == 0 || len(v.Params.PPS) == 0 {
		t.Errorf("video track without parameter sets")
	}
	if a.Codec != audio || a.ClockRate != 48000 || a.Params.SampleRate != 48000 {
		t.Errorf("audio track = %s %d Hz (params %d Hz), want %s 48000 Hz", a.Codec, a.ClockRate, a.Params.SampleRate, audio)
	}
}

// probeStream is what ffprobe says of one stream of a file.
type probeStream struct {
	CodecName    string `json:"codec_name"`
	CodecType    string `json:"codec_type"`
	Width        int    `json:"width"`
	Height       int    `json:"height"`
	SampleRate   string `json:"sample_rate"`
	NbReadFrames string `json:"nb_read_frames"`
	BitRate      string `json:"bit_rate"`
}

// ffprobe returns the streams of a file.
func ffprobe(t testing.TB, path string, count bool) []probeStream {
	t.Helper()
	args := []string{"-v", "error", "-show_streams", "-of", "json"}
	if count {
		args = append(args, "-count_frames")
	}
	testutil.RequireFFmpeg(t)
	cmd := exec.Command("ffprobe", append(args, path)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ffprobe %s: %v\n%s", path, err, stderr.Bytes())
	}
	var res struct{ Streams []probeStream }
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("ffprobe output: %v", err)
	}
	return res.Streams
}

// recordRTSP has ffmpeg read url for seconds and copy it into an mp4 file.
func recordRTSP(t testing.TB, url, transport string, seconds int) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.mp4")
	cmd := exec.Command(testutil.RequireFFmpeg(t), "-hide_banner", "-loglevel", "error", "-nostdin",
		"-rtsp_transport", transport, "-i", url, "-t", strconv.Itoa(seconds), "-c", "copy", "-y", out)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(seconds+30)*time.Second)
	defer cancel()
	done := make(chan struct{})
	var b []byte
	var err error
	go func() { b, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-done
	}
	if err != nil {
		t.Fatalf("ffmpeg reading %s: %v\n%s", url, err, b)
	}
	return out
}
