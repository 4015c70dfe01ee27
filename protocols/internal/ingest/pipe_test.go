package ingest

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
)

// lavfiArgs makes ffmpeg write seconds of H.264 and AAC as MPEG-TS to stdout, at native rate
// when live.
func lavfiArgs(seconds string, live bool) []string {
	args := append([]string{"-nostdin", "-hide_banner", "-loglevel", "error"},
		testutil.Pattern{Width: 64, Height: 48, Realtime: live}.Args()...)
	args = append(args, "-t", seconds,
		"-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-pix_fmt", "yuv420p", "-c:a", "aac",
		"-f", "mpegts", "-flush_packets", "1", "pipe:1")
	return args
}

func TestRunPipe(t *testing.T) {
	testutil.RequireFFmpeg(t)
	s, r := newStream(t)
	if err := RunPipe(context.Background(), "ffmpeg", lavfiArgs("1", false), s, discard, false, nil); err != nil {
		t.Fatalf("RunPipe: %v", err)
	}
	if s.Publishing() {
		t.Error("still publishing after RunPipe returned")
	}
	aus := readAll(s, r)
	checkMonotonic(t, aus)
	if len(aus) < 60 {
		t.Errorf("%d units from 1 s of H.264 and AAC", len(aus))
	}
}

// TestRunPipeFailures: a missing program and an ffmpeg that fails are errors; a program that
// exits 0 without output is ErrNoMedia.
func TestRunPipeFailures(t *testing.T) {
	s := stream.New("fail", stream.Options{Log: discard})
	err := RunPipe(context.Background(), "/nonexistent/ffmpeg", nil, s, discard, false, nil)
	if err == nil || errors.Is(err, ErrNoMedia) {
		t.Errorf("missing program: %v", err)
	}
	if _, lerr := exec.LookPath("true"); lerr == nil {
		if err := RunPipe(context.Background(), "true", nil, s, discard, false, nil); !errors.Is(err, ErrNoMedia) || !errors.Is(err, stream.ErrNoMedia) {
			t.Errorf("true: %v, want ErrNoMedia (stream's too)", err)
		}
	}
	if _, lerr := exec.LookPath("ffmpeg"); lerr == nil {
		err := RunPipe(context.Background(), "ffmpeg", []string{"-hide_banner", "-i", "/nonexistent/input.ts", "-f", "mpegts", "pipe:1"}, s, discard, false, nil)
		if err == nil || errors.Is(err, ErrNoMedia) {
			t.Errorf("ffmpeg on a missing file: %v, want its failure", err)
		}
	}
}

// TestRunPipeRefused: output that cannot be published stops ffmpeg at once.
func TestRunPipeRefused(t *testing.T) {
	testutil.RequireFFmpeg(t)
	s := stream.New("busy", stream.Options{Log: discard})
	other, err := s.Publish()
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	start := time.Now()
	err = RunPipe(context.Background(), "ffmpeg", lavfiArgs("60", true), s, discard, false, nil)
	if !errors.Is(err, stream.ErrBusy) || !strings.HasPrefix(err.Error(), "ffmpeg output: ") {
		t.Fatalf("RunPipe: %v, want ffmpeg output: ... ErrBusy", err)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("RunPipe took %s: ffmpeg was not stopped", took)
	}
}

// TestRunPipeCancel: the end of ctx stops ffmpeg and is no error.
func TestRunPipeCancel(t *testing.T) {
	testutil.RequireFFmpeg(t)
	s, r := newStream(t)
	run := testutil.Go(t, func(ctx context.Context) error {
		return RunPipe(ctx, "ffmpeg", lavfiArgs("60", true), s, discard, false, nil)
	})
	testutil.Eventually(t, 15*time.Second, "media flows", func() bool { return s.Stats().UnitsIn > 10 })
	run.Stop(t, 15*time.Second)
	if s.Publishing() {
		t.Error("still publishing after RunPipe returned")
	}
	checkMonotonic(t, readAll(s, r))
}
