package transcode

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
)

// startLooping publishes the units over and over, paced, with timestamps that go on
// increasing, until ctx ends or stop is called.
func startLooping(t *testing.T, ctx context.Context, s *stream.Stream, tracks []media.Track, units []*media.AccessUnit) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	go func() {
		defer close(done)
		pub, err := s.Publish()
		if err != nil {
			return
		}
		defer pub.Close()
		_ = pub.SetTracks(tracks)
		start := time.Now()
		t0 := units[0].DTS
		span := time.Duration(units[len(units)-1].DTS-t0+3600) * time.Second / 90000
		for loop := time.Duration(0); ctx.Err() == nil; loop++ {
			off := loop * span
			for _, au := range units {
				clock := tracks[au.Track].ClockRate
				at := off + time.Duration(media.Rescale(au.DTS, clock, 90000)-t0)*time.Second/90000
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Until(start.Add(at))):
				}
				cp := *au
				d := media.Rescale(int64(off/time.Microsecond), 1000000, clock)
				cp.DTS += d
				cp.PTS += d
				cp.Arrival = time.Now()
				if pub.Write(&cp) != nil {
					return
				}
			}
		}
	}()
	return stop
}

// startedJob runs a copying Job on a looping input until ffmpeg reports progress.
func startedJob(t *testing.T, ctx context.Context, stall time.Duration) (*jobSetup, func(time.Duration) (error, bool), func()) {
	t.Helper()
	tracks, units := streamtest.ReadTS(t, h264360p30(t))
	js := newJobSetup(t, nil, tracks, stall)
	stop := startLooping(t, ctx, js.in, tracks, units)
	wait := runJob(ctx, js.job)
	deadline := time.Now().Add(30 * time.Second)
	for js.job.Progress().Frame < 10 {
		if time.Now().After(deadline) {
			t.Fatal("no progress within 30 s")
		}
		if err, done := wait(100 * time.Millisecond); done {
			t.Fatalf("Run returned early: %v", err)
		}
	}
	return js, wait, stop
}

// TestJobKilled: ffmpeg killed from outside makes Run fail, quoting how it ended.
func TestJobKilled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	js, wait, _ := startedJob(t, ctx, 0)
	pid := int(js.pid.Load())
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err, ok := wait(20 * time.Second)
	if !ok {
		t.Fatal("Run did not return after ffmpeg was killed")
	}
	t.Logf("Run: %v", err)
	if err == nil || ctx.Err() != nil {
		t.Fatalf("Run returned %v, want an error", err)
	}
	if !pidGone(pid) {
		t.Errorf("ffmpeg %d still exists", pid)
	}
}

// TestJobCancel: ending ctx stops ffmpeg; none is left when Run returns.
func TestJobCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	jctx, jcancel := context.WithCancel(ctx)
	js, wait, _ := startedJob(t, jctx, 0)
	pid := int(js.pid.Load())
	jcancel()
	err, ok := wait(20 * time.Second)
	if !ok {
		t.Fatal("Run did not return after cancel")
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run returned %v, want context.Canceled", err)
	}
	if !pidGone(pid) {
		t.Errorf("ffmpeg %d still exists after Run returned", pid)
	}
}

// TestJobStall: a stopped ffmpeg is killed by the watchdog within StallTimeout + 2 s.
func TestJobStall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const stall = 3 * time.Second
	js, wait, _ := startedJob(t, ctx, stall)
	pid := int(js.pid.Load())
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	err, ok := wait(stall + 2*time.Second)
	if !ok {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("watchdog did not fire within %v", stall+2*time.Second)
	}
	t.Logf("Run after %v: %v", time.Since(stopped).Round(time.Millisecond), err)
	if !errors.Is(err, ErrStalled) {
		t.Errorf("Run returned %v, want ErrStalled", err)
	}
	if !pidGone(pid) {
		t.Errorf("ffmpeg %d still exists", pid)
	}
}

// TestJobInputIdle: an input that stops publishing is no stall; ffmpeg waits for it.
func TestJobInputIdle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const stall = 2 * time.Second
	_, wait, stop := startedJob(t, ctx, stall)
	stop()
	if err, done := wait(2*stall + time.Second); done {
		t.Fatalf("Run returned while the input was idle: %v", err)
	}
	cancel()
	if err, done := wait(20 * time.Second); !done || !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel: returned %v, %v", done, err)
	}
}

// TestJobInputChanged: a new publisher with other codecs makes Run fail with ErrInputChanged.
func TestJobInputChanged(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	tracks, units := streamtest.ReadTS(t, h265360p(t))
	js, wait, stop := startedJob(t, ctx, 0)
	stop()
	pubDone := make(chan struct{})
	go func() { defer close(pubDone); _ = publish(ctx, js.in, tracks, units, 1) }()
	err, ok := wait(20 * time.Second)
	cancel()
	<-pubDone
	if !ok {
		t.Fatal("Run did not return after the input changed")
	}
	t.Logf("Run: %v", err)
	if !errors.Is(err, ErrInputChanged) {
		t.Errorf("Run returned %v, want ErrInputChanged", err)
	}
}

// TestJobTracksMismatch: arguments built for other tracks than the input's fail at once.
func TestJobTracksMismatch(t *testing.T) {
	tracks, units := streamtest.ReadTS(t, h264360p30(t))
	tracks265, _ := streamtest.ReadTS(t, h265360p(t))
	js := newJobSetup(t, nil, tracks265, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var started atomic.Bool
	js.job.cfg.OnStart = func(int) { started.Store(true) }
	wait := runJob(ctx, js.job)
	pubDone := make(chan struct{})
	go func() { defer close(pubDone); _ = publish(ctx, js.in, tracks, units[:20], 1) }()
	err, ok := wait(20 * time.Second)
	cancel()
	<-pubDone
	if !ok || !errors.Is(err, ErrInputChanged) || started.Load() {
		t.Fatalf("Run: returned %v, %v, ffmpeg started %v; want ErrInputChanged before ffmpeg", ok, err, started.Load())
	}
	t.Logf("Run: %v", err)
}

// TestJobFFmpegFails: ffmpeg exiting with an error makes Run fail quoting its stderr, which
// carries no progress lines; a missing program fails too.
func TestJobFFmpegFails(t *testing.T) {
	tracks, units := streamtest.ReadTS(t, h264360p30(t))
	for _, c := range []struct {
		name, ffmpeg, want string
		bad                bool
	}{
		{name: "unknown encoder", ffmpeg: "ffmpeg", want: "nosuchencoder", bad: true},
		{name: "missing program", ffmpeg: "/nonexistent/ffmpeg", want: "/nonexistent/ffmpeg"},
	} {
		t.Run(c.name, func(t *testing.T) {
			js := newJobSetup(t, nil, tracks, 0)
			js.job.cfg.FFmpeg = c.ffmpeg
			if c.bad {
				args := slices.Clone(js.job.cfg.Args)
				args[slices.Index(args, "-c:v")+1] = "nosuchencoder"
				js.job.cfg.Args = args
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			stop := startLooping(t, ctx, js.in, tracks, units)
			defer stop()
			err, ok := runJob(ctx, js.job)(30 * time.Second)
			if !ok {
				t.Fatal("Run did not return")
			}
			t.Logf("Run: %v", err)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Run returned %v, want an error about %q", err, c.want)
			}
			if strings.Contains(err.Error(), "progress=") || strings.Contains(err.Error(), "out_time") {
				t.Errorf("error quotes progress lines: %v", err)
			}
		})
	}
}
