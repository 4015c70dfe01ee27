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

// TestJobEnds: however a running job ends (ffmpeg killed from outside, ctx cancelled, ffmpeg
// stopped and caught by the watchdog within StallTimeout + 2 s), Run returns in time with the
// error that says so, and no ffmpeg is left.
func TestJobEnds(t *testing.T) {
	const stall = 3 * time.Second
	for _, tc := range []struct {
		name   string
		stall  time.Duration
		end    func(t *testing.T, pid int, cancel context.CancelFunc)
		within time.Duration
		want   func(err error) bool
	}{
		{"killed", 0, func(t *testing.T, pid int, _ context.CancelFunc) {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}, 20 * time.Second, func(err error) bool { return err != nil && strings.Contains(err.Error(), "killed") }},
		{"cancelled", 0, func(_ *testing.T, _ int, cancel context.CancelFunc) { cancel() },
			20 * time.Second, func(err error) bool { return errors.Is(err, context.Canceled) }},
		{"stalled", stall, func(t *testing.T, pid int, _ context.CancelFunc) {
			if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
		}, stall + 2*time.Second, func(err error) bool { return errors.Is(err, ErrStalled) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			jctx, jcancel := context.WithCancel(ctx)
			defer jcancel()
			js, wait, _ := startedJob(t, jctx, tc.stall)
			pid := int(js.pid.Load())
			tc.end(t, pid, jcancel)
			ended := time.Now()
			err, ok := wait(tc.within)
			if !ok {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("Run did not return within %v", tc.within)
			}
			t.Logf("Run after %v: %v", time.Since(ended).Round(time.Millisecond), err)
			if !tc.want(err) {
				t.Errorf("Run returned %v", err)
			}
			if !pidGone(pid) {
				t.Errorf("ffmpeg %d still exists after Run returned", pid)
			}
		})
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
	go func() { defer close(pubDone); _ = streamtest.Play(ctx, js.in, tracks, units, 1, 1) }()
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
	go func() { defer close(pubDone); _ = streamtest.Play(ctx, js.in, tracks, units[:20], 1, 1) }()
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
