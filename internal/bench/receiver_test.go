package bench

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// testClip makes a 4 s clip at 25 fps (100 frames, a key frame a second) and reads it.
func testClip(t *testing.T) *Clip {
	t.Helper()
	testutil.RequireFFmpeg(t)
	path := filepath.Join(t.TempDir(), "clip.ts")
	testutil.MakeClip(t, path, 4, 1000)
	c, err := MakeClip(context.Background(), path, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Frames) != 100 {
		t.Fatalf("clip of %d frames, want 100", len(c.Frames))
	}
	return c
}

// TestRTMPReceiver: the RTMP receiver counts every video frame ffmpeg publishes to it, with
// their timestamps, and drops nothing.
func TestRTMPReceiver(t *testing.T) {
	c := testClip(t)
	port := testutil.FreePort(t)
	k, err := listenRTMP(port, rtmpKey(1), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	target := fanTarget{kind: recvRTMP, port: port, key: rtmpKey(1)}
	args := append([]string{"-i", c.Path, "-c", "copy", "-map", "0"}, target.ffmpegOutput()...)
	if err := testutil.FFmpeg(t, args...).Wait(30 * time.Second); err != nil {
		t.Fatalf("ffmpeg publishing to %s: %v", k.Label(), err)
	}
	testutil.Eventually(t, 10*time.Second, "100 frames at the receiver", func() bool { return k.Received().Frames >= 100 })
	got := k.Received()
	if got.Frames != 100 || got.Dropped != 0 || got.CCErrors != 0 {
		t.Fatalf("received %+v, want 100 frames and no drop", got)
	}
	if span := ticks90k(got.LastPTS - got.FirstPTS); span != 99*40*time.Millisecond {
		t.Fatalf("frames span %v, want 3.96s", span)
	}
}

// TestPublishSRTFan: the pacer sends the clip to two SRT listeners at once, on one schedule;
// each gets every frame, in order, without a lost packet.
func TestPublishSRTFan(t *testing.T) {
	c := testClip(t)
	var sinks []*srtSink
	var addrs []string
	for range 2 {
		k, err := listenSRT(testutil.FreePort(t))
		if err != nil {
			t.Fatal(err)
		}
		defer k.Close()
		sinks = append(sinks, k)
		addrs = append(addrs, fmt.Sprintf("127.0.0.1:%d", k.Port))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sent := newSent(c)
	start := time.Now()
	if err := publishSRT(ctx, addrs, "bench", c, sent); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 3500*time.Millisecond {
		t.Fatalf("the clip of 4 s went out in %v: not paced", took)
	}
	if n := sent.FramesSent(); n != 100 {
		t.Fatalf("%d frames sent, want 100", n)
	}
	for _, k := range sinks {
		testutil.Eventually(t, 5*time.Second, "100 frames at "+k.Label(), func() bool { return k.Received().Frames >= 100 })
		if got := k.Received(); got.Frames != 100 || got.CCErrors != 0 || ticks90k(got.LastPTS-got.FirstPTS) != 99*40*time.Millisecond {
			t.Fatalf("%s received %+v", k.Label(), got)
		}
	}
}
