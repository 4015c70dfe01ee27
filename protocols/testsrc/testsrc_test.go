package testsrc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
	"github.com/sluicemedia/sluice/protocols/internal/ingest"
)

// argValue returns the value after flag, the n-th time it appears.
func argValue(args []string, flag string, n int) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			if n == 0 {
				return args[i+1]
			}
			n--
		}
	}
	return ""
}

func TestArgs(t *testing.T) {
	cases := []struct {
		name string
		p    Params
		want map[string]string // flag (with #n for the n-th) → value
	}{
		{"defaults", Params{}, map[string]string{
			"-i":            "testsrc2=size=1920x1080:rate=24",
			"-i#1":          "sine=frequency=216:sample_rate=48000",
			"-t":            "3600",
			"-b:v":          "6000k",
			"-maxrate":      "6000k",
			"-minrate":      "6000k",
			"-bufsize":      "6000k",
			"-g":            "48",
			"-keyint_min":   "48",
			"-sc_threshold": "0",
			"-c:v":          "libx264",
			"-c:a":          "aac",
			"-b:a":          "128k",
			"-f#2":          "mpegts",
		}},
		{"custom", Params{FPS: 25, SoundHz: 440, Width: 640, Height: 360, DurationSec: 10, BitrateKbps: 1000}, map[string]string{
			"-i":          "testsrc2=size=640x360:rate=25",
			"-i#1":        "sine=frequency=440:sample_rate=48000",
			"-t":          "10",
			"-b:v":        "1000k",
			"-g":          "50",
			"-keyint_min": "50",
		}},
		{"30 fps", Params{FPS: 30}, map[string]string{"-g": "60", "-i": "testsrc2=size=1920x1080:rate=30"}},
	}
	for _, tc := range cases {
		args, err := Args(tc.p)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for k, want := range tc.want {
			flag, n := k, 0
			if i := strings.IndexByte(k, '#'); i >= 0 {
				flag = k[:i]
				n, _ = strconv.Atoi(k[i+1:])
			}
			if got := argValue(args, flag, n); got != want {
				t.Errorf("%s: %s = %q, want %q", tc.name, k, got, want)
			}
		}
		if args[len(args)-1] != "pipe:1" || slices.Index(args, "-re") < 0 || slices.Index(args, "-nostdin") < 0 {
			t.Errorf("%s: args %q", tc.name, args)
		}
		if n := strings.Count(strings.Join(args, " "), "-re -f lavfi"); n != 2 {
			t.Errorf("%s: -re before %d inputs, want 2", tc.name, n)
		}
	}
}

func TestParamsInvalid(t *testing.T) {
	for _, p := range []Params{
		{Width: 641}, {Height: 361}, {FPS: -1}, {FPS: 500}, {SoundHz: 30000},
		{Width: 8}, {DurationSec: -5}, {BitrateKbps: 10},
	} {
		if _, err := Args(p); err == nil {
			t.Errorf("%+v accepted", p)
		}
		if err := Run(context.Background(), stream.New("x", stream.Options{}), Options{FFmpeg: "ffmpeg", Params: p}); err == nil {
			t.Errorf("Run with %+v: no error", p)
		}
	}
}

// childFFmpeg returns the pid of this process's ffmpeg child whose command line holds mark.
func childFFmpeg(mark string) int {
	ents, _ := os.ReadDir("/proc")
	me := strconv.Itoa(os.Getpid())
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || !strings.Contains(s[:i], "(ffmpeg") {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 || f[1] != me {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if strings.Contains(string(cmdline), mark) {
			return pid
		}
	}
	return 0
}

func TestRunE2E(t *testing.T) {
	ffmpeg := testutil.RequireFFmpeg(t)
	s := stream.New("test-video", stream.Options{})
	collected := streamtest.Collect(t, s)

	p := Params{FPS: 25, Width: 640, Height: 360, DurationSec: 600, BitrateKbps: 1000}
	run := testutil.Go(t, func(ctx context.Context) error { return Run(ctx, s, Options{FFmpeg: ffmpeg, Params: p}) })

	checkRates(t, s, float64(p.BitrateKbps+AudioKbps), 25)
	// Let 6 s of media through, for 3 key frames at least.
	for deadline := time.Now().Add(30 * time.Second); time.Since(s.Stats().Since) < 6*time.Second; {
		if time.Now().After(deadline) {
			t.Fatal("no 6 s of media within 30 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	pid := childFFmpeg("size=640x360")
	if pid == 0 {
		t.Fatal("no ffmpeg child found")
	}
	run.Stop(t, 15*time.Second)
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ffmpeg %d still exists after Run returned", pid)
	}

	tracks := s.Tracks()
	if len(tracks) != 2 || tracks[0].Codec != media.CodecH264 || tracks[1].Codec != media.CodecAAC ||
		tracks[0].Params.Width != 640 || tracks[0].Params.Height != 360 || tracks[1].Params.SampleRate != 48000 {
		t.Fatalf("tracks %+v", tracks)
	}
	aus := collected.Snapshot()
	last := map[int]int64{}
	var keys []int64
	for i, au := range aus {
		if l, ok := last[au.Track]; ok && au.DTS <= l {
			t.Fatalf("unit %d track %d: DTS %d after %d", i, au.Track, au.DTS, l)
		}
		last[au.Track] = au.DTS
		if au.Track == 0 && au.Key {
			keys = append(keys, au.DTS)
		}
	}
	if len(keys) < 3 {
		t.Fatalf("%d key frames in %d units", len(keys), len(aus))
	}
	for i := 1; i < len(keys); i++ {
		if d := keys[i] - keys[i-1]; d != 2*90000 {
			t.Errorf("key frames %d and %d are %.3f s apart, want 2 s", i-1, i, float64(d)/90000)
		}
	}
	t.Logf("%d units, %d key frames", len(aus), len(keys))
}

func TestRunShort(t *testing.T) {
	ffmpeg := testutil.RequireFFmpeg(t)
	t.Parallel()
	s := stream.New("short", stream.Options{})
	start := time.Now()
	err := Run(context.Background(), s, Options{FFmpeg: ffmpeg, Params: Params{Width: 320, Height: 240, DurationSec: 2, BitrateKbps: 300}})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 1500*time.Millisecond {
		t.Errorf("2 s stream done in %s: not paced", took)
	}
	if s.Stats().UnitsIn < 100 || s.Publishing() {
		t.Errorf("stats after the end: %+v", s.Stats())
	}
}

func TestRunBadFFmpeg(t *testing.T) {
	t.Parallel()
	err := Run(context.Background(), stream.New("x", stream.Options{}), Options{FFmpeg: "/nonexistent/ffmpeg"})
	if err == nil {
		t.Fatal("no error")
	}
	// A program that exits 0 without output.
	if _, lerr := exec.LookPath("true"); lerr == nil {
		err = Run(context.Background(), stream.New("y", stream.Options{}), Options{FFmpeg: "true"})
		if !errors.Is(err, ingest.ErrNoMedia) {
			t.Fatalf("true: %v, want ingest.ErrNoMedia", err)
		}
	}
}
