package bench

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestStampSurvivesEncoding: frames stamped with a start time plus their timestamp, encoded as
// the latency publisher encodes (H.264 at the bench's bitrate, 1 s GOP) by real ffmpeg and decoded
// back by ffmpeg, give back each frame's stamp within one frame.
func TestStampSurvivesEncoding(t *testing.T) {
	t.Parallel()
	const seconds = 3
	// A start near a 2^24 ms boundary, so that the stamps wrap within the clip.
	now := time.Now().UnixMilli()
	start := now - now%(1<<StampBits) - 1500
	ts := filepath.Join(t.TempDir(), "stamped.ts")
	args := append([]string{"-hide_banner", "-loglevel", "error", "-nostdin", "-y"},
		stampSource(fmt.Sprintf("%d+floor(t*1000)", start), false)...)
	args = append(args, "-t", fmt.Sprint(seconds))
	args = append(args, stampEncode()...)
	args = append(args, "-f", "mpegts", ts)
	if out, err := exec.Command("ffmpeg", args...).CombinedOutput(); err != nil {
		t.Fatalf("encode: %v: %s", err, out)
	}
	var raw, stderr bytes.Buffer
	dec := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-i", ts,
		"-map", "0:v", "-f", "rawvideo", "-pix_fmt", "gray", "-")
	dec.Stdout, dec.Stderr = &raw, &stderr
	if err := dec.Run(); err != nil {
		t.Fatalf("decode: %v: %s", err, stderr.Bytes())
	}
	size := stampWidth * stampHeight
	frames := raw.Len() / size
	if frames < seconds*stampFPS-1 {
		t.Fatalf("decoded %d frames, want %d", frames, seconds*stampFPS)
	}
	frame := time.Second / stampFPS
	for n := range frames {
		code, ok := DecodeStamp(raw.Bytes()[n*size:(n+1)*size], stampWidth, stampHeight)
		if !ok {
			t.Fatalf("frame %d: stamp does not decode", n)
		}
		want := start + int64(n)*1000/stampFPS
		got := UnwrapStamp(code, now+10_000)
		if d := time.Duration(got-want) * time.Millisecond; d < -frame || d > frame {
			t.Fatalf("frame %d: stamp %d, want %d ± %v (off by %v)", n, got, want, frame, d)
		}
	}
	// A picture without the stamp (black) does not decode.
	if _, ok := DecodeStamp(make([]byte, size), stampWidth, stampHeight); ok {
		t.Error("a black frame decodes as a stamp")
	}
}

// TestUnwrapStamp: the time is the latest one at or before now with the code's low bits.
func TestUnwrapStamp(t *testing.T) {
	const m = int64(1) << StampBits
	now := int64(1_790_000_000_123)
	for _, back := range []int64{0, 1, 1500, m - 1} {
		want := now - back
		if got := UnwrapStamp(uint32(want%m), now); got != want {
			t.Errorf("%d ms before now: got %d, want %d", back, got, want)
		}
	}
}

// TestLiveStamp: the live publisher's frames carry the wall clock when they were made: each
// within ffmpeg's run, never going back, and never made faster than the frame rate (the realtime
// filter holds ffmpeg back to the clock; a busy machine makes it later, never earlier, so the
// only upper bound is the run itself).
func TestLiveStamp(t *testing.T) {
	t.Parallel()
	args := append([]string{"-hide_banner", "-loglevel", "error", "-nostdin"}, stampSource("", true)...)
	args = append(args, "-t", "2", "-map", "0:v", "-f", "rawvideo", "-pix_fmt", "gray", "-")
	var raw, stderr bytes.Buffer
	cmd := exec.Command("ffmpeg", args...)
	cmd.Stdout, cmd.Stderr = &raw, &stderr
	before := time.Now().UnixMilli()
	if err := cmd.Run(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, stderr.Bytes())
	}
	after := time.Now().UnixMilli()
	size := stampWidth * stampHeight
	frames := raw.Len() / size
	if frames < 2*stampFPS-1 {
		t.Fatalf("%d frames, want %d", frames, 2*stampFPS)
	}
	var first, prev int64
	for n := range frames {
		code, ok := DecodeStamp(raw.Bytes()[n*size:(n+1)*size], stampWidth, stampHeight)
		if !ok {
			t.Fatalf("frame %d: stamp does not decode", n)
		}
		got := UnwrapStamp(code, after)
		if got < before || got > after {
			t.Fatalf("frame %d: stamp %d outside ffmpeg's run [%d, %d]", n, got, before, after)
		}
		if n == 0 {
			first = got
		} else if got < prev {
			t.Errorf("frame %d: stamp %d before the previous frame's %d", n, got, prev)
		}
		prev = got
	}
	if avg := float64(prev-first) / float64(frames-1); avg < 0.8*1000/stampFPS {
		t.Errorf("frames %.1f ms apart on average: faster than %d fps, so the stamps are not the clock", avg, stampFPS)
	}
}
