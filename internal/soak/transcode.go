package soak

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"
)

// TranscodeResult counts the transcoding restream cycles.
type TranscodeResult struct {
	Cycles int
	// FFmpegSeen counts cycles in which a new child process of the server ran while the
	// restream was running.
	FFmpegSeen int
	// Slowest is the longest create-to-running time.
	Slowest  time.Duration
	Failures []string
}

// Transcoding restream timeouts.
const (
	runTimeout  = 30 * time.Second
	reapTimeout = 10 * time.Second
	// maxTranscodeFailures stops the cycles early: the run has shown what is wrong.
	maxTranscodeFailures = 5
)

// transcoding is the transcoding object of the cycled restreams: H.264 on the CPU, as fast as
// it goes, down to 320x180.
var transcoding = map[string]any{"video_transcoding": "libx264", "preset": "ultrafast", "frame_width": 320,
	"frame_height": 180, "output_video_bitrate": 300}

// RunTranscodes runs n create / start / wait until running / stop / remove cycles of a
// transcoding restream reading the fixture's steady stream (which a looping publisher feeds
// meanwhile) and sending to a UDP port nobody reads. After each remove, no child process of
// the server (pid) that was not there before the create may remain.
func RunTranscodes(ctx context.Context, c *Client, f *Fixture, clip *Clip, pid, n int, done *atomic.Int64, log *slog.Logger) (res TranscodeResult) {
	pctx, stopPub := context.WithCancel(ctx)
	pubDone := make(chan error, 1)
	go func() { pubDone <- Publish(pctx, f.Steady, clip, 0, true, log) }()
	defer func() {
		stopPub()
		if err := <-pubDone; err != nil {
			res.Failures = append(res.Failures, fmt.Sprintf("steady publisher: %v", err))
		}
	}()
	for i := 1; i <= n && ctx.Err() == nil && len(res.Failures) < maxTranscodeFailures; i++ {
		if err := transcodeCycle(ctx, c, f, pid, i, &res); err != nil {
			res.Failures = append(res.Failures, fmt.Sprintf("transcoding cycle %d: %v", i, err))
			continue
		}
		res.Cycles++
		if done != nil {
			done.Add(1)
		}
	}
	return res
}

// transcodeCycle runs one cycle.
func transcodeCycle(ctx context.Context, c *Client, f *Fixture, pid, i int, res *TranscodeResult) error {
	before, err := childPIDs(pid)
	if err != nil {
		return err
	}
	id, err := c.Create(ctx, modRestream, map[string]any{"restream_name": fmt.Sprintf("soak-transcode-%d", i), "active": false,
		"input": f.SteadyInput, "transcoding": transcoding,
		"output": map[string]any{"output_type": "OUTPUT_TYPE_UDP_URL", "output_stream_url": f.Hole}})
	if err != nil {
		return err
	}
	start := time.Now()
	err = c.Start(ctx, modRestream, id)
	if err == nil {
		err = waitState(ctx, c, modRestream, id, "running", runTimeout)
	}
	if err == nil {
		res.Slowest = max(res.Slowest, time.Since(start))
		if now, cerr := childPIDs(pid); cerr == nil && slices.ContainsFunc(now, func(p int) bool { return !slices.Contains(before, p) }) {
			res.FFmpegSeen++
		}
	}
	// Stop and remove even after a failure, so that one bad cycle does not leak into the next.
	if serr := c.Stop(ctx, modRestream, id); serr != nil && err == nil {
		err = serr
	}
	if rerr := c.Remove(ctx, modRestream, id); rerr != nil && err == nil {
		err = rerr
	}
	if err != nil {
		return err
	}
	deadline := time.Now().Add(reapTimeout)
	for {
		now, err := childPIDs(pid)
		if err != nil {
			return err
		}
		var left []int
		for _, p := range now {
			if !slices.Contains(before, p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("child processes %v still there %v after remove", left, reapTimeout)
		}
		sleep(ctx, 50*time.Millisecond)
	}
}

// childPIDs lists the pids of pid's children.
func childPIDs(pid int) ([]int, error) {
	kids, err := Children(pid)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(kids))
	for i, k := range kids {
		out[i] = k.PID
	}
	return out, nil
}
