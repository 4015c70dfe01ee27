package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// Frame is one video frame of a clip, in decode order.
type Frame struct {
	PTS       time.Duration // presentation time after the clip's first (smallest) video PTS
	Key       bool
	lastChunk int // index of the SRT payload that carries the frame's last packet
}

// Clip is a pre-encoded MPEG-TS file with its send schedule: chunk i of 1316 bytes is due
// At[i] after the start, the PCR pace.
type Clip struct {
	Path   string
	Data   []byte
	At     []time.Duration
	Frames []Frame
	byPTS  map[int64]int // frame index by its PTS (90 kHz, as in the clip)

	packetsOnce sync.Once
	packets     *packetIndex // the clip's TS packets by content, made on first use
}

// FrameIndex returns the index of the frame with PTS pts (90 kHz, as in the clip).
func (c *Clip) FrameIndex(pts int64) (int, bool) {
	i, ok := c.byPTS[pts]
	return i, ok
}

// Packets returns the index of the clip's TS packets by content.
func (c *Clip) Packets() *packetIndex {
	c.packetsOnce.Do(func() { c.packets = newPacketIndex(c.Data) })
	return c.packets
}

// clipArgs encode the bench source: 1280x720 at 30 fps H.264 at 4 Mbit/s with a key frame
// every 2 s, and AAC, in MPEG-TS.
func clipArgs(seconds int, out string) []string {
	return []string{"-hide_banner", "-loglevel", "error", "-nostdin", "-y",
		"-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30",
		"-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
		"-t", fmt.Sprint(seconds),
		"-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-profile:v", "high",
		"-b:v", "3850k", "-maxrate", "3850k", "-bufsize", "3850k",
		"-g", "60", "-keyint_min", "60", "-sc_threshold", "0",
		"-c:a", "aac", "-b:a", "128k", "-f", "mpegts", out}
}

// MakeClip returns the clip at path, encoding it with ffmpeg first when it is missing.
func MakeClip(ctx context.Context, path string, seconds int) (*Clip, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("clip %s: %w", path, err)
		}
		tmp := path + ".tmp.ts"
		out, err := exec.CommandContext(ctx, "ffmpeg", clipArgs(seconds, tmp)...).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("clip %s: ffmpeg: %w: %s", path, err, out)
		}
		if err := os.Rename(tmp, path); err != nil {
			return nil, fmt.Errorf("clip %s: %w", path, err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("clip %s: %w", path, err)
	}
	c, err := scanClip(data)
	if err != nil {
		return nil, fmt.Errorf("clip %s: %w", path, err)
	}
	c.Path = path
	return c, nil
}

// scanClip builds the send schedule from the PCRs and lists the video frames.
func scanClip(data []byte) (*Clip, error) {
	n := len(data) / tsSize
	if n == 0 {
		return nil, errors.New("no MPEG-TS packets")
	}
	type mark struct {
		pkt int
		pcr int64
	}
	var pcrs []mark
	var frames []Frame
	var firstPTS int64 = -1
	var ptss []int64
	for i := range n {
		p, ok := parseTS(data[i*tsSize : (i+1)*tsSize])
		if !ok {
			return nil, fmt.Errorf("packet %d: no sync byte", i)
		}
		if p.pcr >= 0 {
			pcrs = append(pcrs, mark{i, p.pcr})
		}
		if !p.pusi {
			continue
		}
		if pts, ok := videoPTS(p.payload); ok {
			if len(frames) > 0 {
				frames[len(frames)-1].lastChunk = (i - 1) / 7
			}
			frames = append(frames, Frame{Key: p.rai})
			ptss = append(ptss, pts)
			if firstPTS < 0 || pts < firstPTS {
				firstPTS = pts
			}
		}
	}
	if len(pcrs) < 2 || len(frames) == 0 {
		return nil, errors.New("no PCRs or no video")
	}
	frames[len(frames)-1].lastChunk = (n - 1) / 7
	byPTS := make(map[int64]int, len(frames))
	for i := range frames {
		frames[i].PTS = ticks90k(ptss[i] - firstPTS)
		byPTS[ptss[i]] = i
	}
	// Each packet is due at its PCR time, interpolated between PCRs by position.
	j := 0 // due is called with growing pkt: the PCR pair only moves forward
	due := func(pkt int) time.Duration {
		for j+2 < len(pcrs) && pcrs[j+1].pkt <= pkt {
			j++
		}
		a, b := pcrs[j], pcrs[j+1]
		t := float64(a.pcr-pcrs[0].pcr) + float64(b.pcr-a.pcr)*float64(pkt-a.pkt)/float64(b.pkt-a.pkt)
		return ticks90k(max(int64(t), 0))
	}
	chunks := (n + 6) / 7
	at := make([]time.Duration, chunks)
	for c := range chunks {
		at[c] = due(min(c*7+6, n-1))
	}
	return &Clip{Data: data[:n*tsSize], At: at, Frames: frames, byPTS: byPTS}, nil
}
