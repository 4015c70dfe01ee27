package soak

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/mpegts"
)

// Clip is a pre-encoded MPEG-TS clip demuxed once into access units, which publishers send
// again and again.
type Clip struct {
	Tracks []media.Track
	Units  []*media.AccessUnit
	// At is each unit's send time from the clip's start (its DTS on a common origin).
	At []time.Duration
	// Duration is the clip's length: the last video unit's time plus one frame.
	Duration time.Duration
}

// Clip encoding: small and cheap, so that a thousand publisher cycles fit in minutes; a key
// frame every 12 frames (0.48 s at 25 fps) so that every 1 to 2 s cycle carries several.
const (
	clipSize = "426x240"
	clipFPS  = 25
	clipGOP  = 12
)

// MakeClip encodes seconds of test pattern and tone into an MPEG-TS file at path with ffmpeg:
// H.264 426x240 at 25 fps, 300 kbit/s, and AAC 48 kHz mono.
func MakeClip(ctx context.Context, ffmpeg, path string, seconds float64) error {
	args := []string{"-hide_banner", "-loglevel", "error", "-nostdin", "-y",
		"-f", "lavfi", "-i", fmt.Sprintf("testsrc2=size=%s:rate=%d", clipSize, clipFPS),
		"-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
		"-t", strconv.FormatFloat(seconds, 'f', 3, 64),
		"-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-pix_fmt", "yuv420p",
		"-b:v", "300k", "-g", strconv.Itoa(clipGOP), "-keyint_min", strconv.Itoa(clipGOP), "-sc_threshold", "0",
		"-c:a", "aac", "-b:a", "64k", "-ac", "1",
		"-f", "mpegts", path}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, ffmpeg, args...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("make clip %s: %w: %s", path, err, truncate(stderr.Bytes()))
	}
	return nil
}

// LoadClip demuxes the MPEG-TS file at path.
func LoadClip(path string) (*Clip, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load clip: %w", err)
	}
	dmx := mpegts.NewDemuxer(bytes.NewReader(raw))
	tracks, err := dmx.Tracks()
	if err != nil {
		return nil, fmt.Errorf("load clip %s: tracks: %w", path, err)
	}
	c := &Clip{Tracks: tracks}
	for {
		au, err := dmx.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("load clip %s: %w", path, err)
		}
		c.Units = append(c.Units, au)
	}
	if err := c.index(); err != nil {
		return nil, fmt.Errorf("load clip %s: %w", path, err)
	}
	return c, nil
}

// index computes At and Duration.
func (c *Clip) index() error {
	if len(c.Units) == 0 {
		return errors.New("no access units")
	}
	at := func(au *media.AccessUnit) time.Duration {
		return time.Duration(media.Rescale(au.DTS, c.Tracks[au.Track].ClockRate, int(time.Second/time.Microsecond))) * time.Microsecond
	}
	origin := at(c.Units[0])
	for _, au := range c.Units {
		origin = min(origin, at(au))
	}
	c.At = make([]time.Duration, len(c.Units))
	var last time.Duration
	video := false
	for i, au := range c.Units {
		c.At[i] = at(au) - origin
		if c.Tracks[au.Track].Codec.IsVideo() {
			video = true
			last = max(last, c.At[i])
		}
	}
	if !video {
		return errors.New("no video track")
	}
	c.Duration = last + time.Second/clipFPS
	return nil
}
