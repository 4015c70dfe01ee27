package transcode

import (
	"context"
	"log/slog"
	"math"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
)

func ptr[T any](v T) *T { return &v }

// jobSetup is an input and an output Stream, a reader on the output and a Job between them.
type jobSetup struct {
	in, out *stream.Stream
	outRd   *stream.Reader
	job     *Job
	pid     atomic.Int64
}

// finish ends the input, waits (2 minutes at most) for the Job's Run, whose wait is given, to
// return nil, and returns the output's tracks and all its units.
func (js *jobSetup) finish(ctx context.Context, t *testing.T, wait func(time.Duration) (error, bool)) ([]media.Track, []*media.AccessUnit) {
	t.Helper()
	js.in.Close()
	if err, ok := wait(2 * time.Minute); !ok || err != nil {
		t.Fatalf("Run: returned %v, %v", ok, err)
	}
	js.out.Close()
	got, err := drain(ctx, js.outRd)
	if err != nil {
		t.Fatal(err)
	}
	return js.out.Tracks(), got
}

func newJobSetup(t *testing.T, tc *Settings, tracks []media.Track, stall time.Duration) *jobSetup {
	t.Helper()
	args, err := Args(tc, tracks, HW{})
	if err != nil {
		t.Fatalf("Args: %v", err)
	}
	t.Logf("ffmpeg %q", args)
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	js := &jobSetup{
		in:  stream.New("in", stream.Options{Log: log}),
		out: stream.New("out", stream.Options{Log: log, QueueSize: 8192}),
	}
	t.Cleanup(js.in.Close)
	t.Cleanup(js.out.Close)
	js.outRd, err = js.out.NewReader("test")
	if err != nil {
		t.Fatal(err)
	}
	js.job = NewJob(JobConfig{
		Args: args, Input: js.in, Tracks: tracks, Output: js.out, Log: log, StallTimeout: stall,
		OnStart: func(pid int) { js.pid.Store(int64(pid)) },
	})
	return js
}

// testWriter sends log lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

// split returns a stream's video and audio units.
func split(tracks []media.Track, units []*media.AccessUnit) (video, audio []*media.AccessUnit) {
	for _, au := range units {
		if tracks[au.Track].Codec.IsVideo() {
			video = append(video, au)
		} else {
			audio = append(audio, au)
		}
	}
	return video, audio
}

func trackOf(tracks []media.Track, video bool) media.Track {
	for _, t := range tracks {
		if t.Codec.IsVideo() == video {
			return t
		}
	}
	return media.Track{}
}

// TestJobH264ToH265 transcodes 720p H.264+AAC into 640x360 H.265 with a 50-frame GOP at
// 800 kbit/s and 96 kbit/s MP3 at 44.1 kHz, and checks the result with ffprobe.
func TestJobH264ToH265(t *testing.T) {
	begin := time.Now()
	tracks, units := streamtest.ReadTS(t, h264720p(t))
	t.Logf("fixture ready after %v", time.Since(begin).Round(time.Millisecond))
	tc := &Settings{
		VideoTranscoding: "libx265", FrameWidth: ptr(640), FrameHeight: ptr(0), GOP: ptr(50),
		OutputVideoBitrate: ptr(800), AudioTranscoding: "mp3", OutputAudioBitrate: ptr(96),
		SampleRate: ptr(44100), Preset: "very fast",
	}
	js := newJobSetup(t, tc, tracks, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	wait := runJob(ctx, js.job)
	if err := streamtest.Play(ctx, js.in, tracks, units, 1, 1); err != nil {
		t.Fatal(err)
	}
	js.in.Close() // the Job finishes ffmpeg's output and returns nil
	t.Logf("input published after %v", time.Since(begin).Round(time.Millisecond))
	err, ok := wait(2 * time.Minute)
	if !ok {
		t.Fatal("Run did not return after the input closed")
	}
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	t.Logf("Run returned after %v", time.Since(begin).Round(time.Millisecond))
	p := js.job.Progress()
	t.Logf("progress: %+v", p)
	js.out.Close()
	got, err := drain(ctx, js.outRd)
	if err != nil {
		t.Fatal(err)
	}
	outTracks := js.out.Tracks()
	v, a := trackOf(outTracks, true), trackOf(outTracks, false)
	if v.Codec != media.CodecH265 || v.Params.Width != 640 || v.Params.Height != 360 {
		t.Errorf("video track %s %dx%d, want H265 640x360", v.Codec, v.Params.Width, v.Params.Height)
	}
	if a.Codec != media.CodecMP3 || a.Params.SampleRate != 44100 {
		t.Errorf("audio track %s %d Hz, want MP3 44100 Hz", a.Codec, a.Params.SampleRate)
	}
	video, audio := split(outTracks, got)
	inVideo, _ := split(tracks, units)
	t.Logf("units out: %d video (of %d in), %d audio", len(video), len(inVideo), len(audio))
	if len(video) < len(inVideo)*9/10 {
		t.Errorf("%d video units out of %d in", len(video), len(inVideo))
	}
	last := -1
	for i, au := range video {
		if !au.Key {
			continue
		}
		if last >= 0 && i-last != 50 {
			t.Errorf("key frame at unit %d, %d after the previous; want every 50", i, i-last)
		}
		last = i
	}
	if last < 100 {
		t.Errorf("last key frame at unit %d: want several GOPs", last)
	}
	checkMonotonic(t, video)

	file := filepath.Join(t.TempDir(), "out.ts")
	writeTS(t, file, outTracks, got)
	pr := ffprobe(t, file)
	var vs, as string
	var w, h int
	bytes := map[int]int{}
	for _, s := range pr.Streams {
		switch s.CodecType {
		case "video":
			vs, w, h = s.CodecName, s.Width, s.Height
		case "audio":
			as = s.CodecName + "@" + s.SampleRate
		}
	}
	for _, pk := range pr.Packets {
		n, _ := strconv.Atoi(pk.Size)
		bytes[pk.StreamIndex] += n
	}
	dur, _ := strconv.ParseFloat(pr.Format.Duration, 64)
	if vs != "hevc" || w != 640 || h != 360 || as != "mp3@44100" {
		t.Errorf("ffprobe: video %s %dx%d, audio %s; want hevc 640x360, mp3@44100", vs, w, h, as)
	}
	if dur < 8 {
		t.Fatalf("ffprobe: duration %.2f s, want at least 8", dur)
	}
	total := 0
	for _, n := range bytes {
		total += n
	}
	kbps := float64(total) * 8 / dur / 1000
	t.Logf("ffprobe: %.2f s, streams %v bytes, %.0f kbit/s (want 896 ± 20 %%)", dur, bytes, kbps)
	if math.Abs(kbps-896)/896 > 0.2 {
		t.Errorf("bitrate %.0f kbit/s, want 896 ± 20 %%", kbps)
	}
}

func checkMonotonic(t *testing.T, units []*media.AccessUnit) {
	t.Helper()
	for i := 1; i < len(units); i++ {
		if units[i].DTS <= units[i-1].DTS {
			t.Errorf("DTS not increasing at unit %d: %d after %d", i, units[i].DTS, units[i-1].DTS)
			return
		}
	}
}

// TestJobH265ToH264Discontinuity transcodes H.265 to H.264 across a publisher reconnect whose
// timestamps start over: the Job goes on, and the output's timestamps keep increasing.
func TestJobH265ToH264Discontinuity(t *testing.T) {
	tracks, units := streamtest.ReadTS(t, h265360p(t))
	js := newJobSetup(t, &Settings{VideoTranscoding: "libx264", Preset: "ultrafast"}, tracks, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	wait := runJob(ctx, js.job)
	for range 2 {
		if err := streamtest.Play(ctx, js.in, tracks, units, 2, 1); err != nil {
			t.Fatal(err)
		}
	}
	outTracks, got := js.finish(ctx, t, wait)
	if v := trackOf(outTracks, true); v.Codec != media.CodecH264 || v.Params.Width != 640 || v.Params.Height != 360 {
		t.Errorf("video track %s %dx%d, want H264 640x360", v.Codec, v.Params.Width, v.Params.Height)
	}
	if a := trackOf(outTracks, false); a.Codec != media.CodecAAC {
		t.Errorf("audio track %s, want AAC (copied)", a.Codec)
	}
	video, audio := split(outTracks, got)
	inVideo, _ := split(tracks, units)
	t.Logf("units out: %d video (2 × %d in), %d audio", len(video), len(inVideo), len(audio))
	if len(video) < 2*len(inVideo)*9/10 {
		t.Errorf("%d video units out, want about %d", len(video), 2*len(inVideo))
	}
	checkMonotonic(t, video)
	checkMonotonic(t, audio)
}

// TestJobFilterFPS halves a 30 fps input with filter_fps 15.
func TestJobFilterFPS(t *testing.T) {
	tracks, units := streamtest.ReadTS(t, h264360p30(t))
	js := newJobSetup(t, &Settings{FilterFPS: ptr(15.0), Preset: "ultrafast"}, tracks, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	wait := runJob(ctx, js.job)
	if err := streamtest.Play(ctx, js.in, tracks, units, 2, 1); err != nil {
		t.Fatal(err)
	}
	outTracks, got := js.finish(ctx, t, wait)
	if v := trackOf(outTracks, true); v.Codec != media.CodecH264 {
		t.Errorf("video %s, want H264 (the input's codec)", v.Codec)
	}
	video, _ := split(outTracks, got)
	inVideo, _ := split(tracks, units)
	span := float64(video[len(video)-1].DTS-video[0].DTS) / 90000
	fps := float64(len(video)-1) / span
	t.Logf("%d frames in, %d out over %.2f s: %.2f fps", len(inVideo), len(video), span, fps)
	if math.Abs(fps-15) > 0.5 {
		t.Errorf("output at %.2f fps, want 15", fps)
	}
	if n := len(video); n < len(inVideo)/2-3 || n > len(inVideo)/2+3 {
		t.Errorf("%d frames out of %d, want half", n, len(inVideo))
	}
}
