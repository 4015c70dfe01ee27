// Package record writes recordings: fragmented MP4 and QuickTime files (a fragment about every
// second, an mfra index on close), FLV and AVI files, each written progressively so that a crash
// loses at most the last second, and repaired at the next start. Memory keeps the last minutes
// of a stream as MP4 fragments in memory.
package record

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/avi"
	"github.com/sluicemedia/sluice/packager/flv"
)

// Formats a recording can be written in (the recording's output_format).
const (
	FormatMP4 = "mp4"
	FormatMOV = "mov"
	FormatFLV = "flv"
	FormatAVI = "avi"
)

// ErrNothingToRepair is returned by Repair for a file that holds no whole media unit.
var ErrNothingToRepair = errors.New("record: no complete media in the file")

// Writer writes one recording file from access units in decode order.
type Writer interface {
	// WriteUnit writes one unit. Units timed before the file's first unit are dropped.
	WriteUnit(au *media.AccessUnit) error
	// Duration returns the media time written so far.
	Duration() time.Duration
	// Size returns the bytes written so far.
	Size() int64
	// Close finishes the file (index, patched headers); it does not close the file itself.
	Close() error
}

// Supported tells whether format is one this package writes.
func Supported(format string) bool {
	switch format {
	case FormatMP4, FormatMOV, FormatFLV, FormatAVI:
		return true
	}
	return false
}

// NewWriter starts a file of the given format on f with the tracks. The first unit written
// should be a video key frame (the recorder skips to one); it sets the file's time zero.
func NewWriter(format string, f io.WriteSeeker, tracks []media.Track) (Writer, error) {
	switch format {
	case FormatMP4, FormatMOV:
		return NewMP4(f, tracks, format == FormatMOV)
	case FormatFLV:
		return newFLV(f, tracks)
	case FormatAVI:
		return newAVI(f, tracks)
	}
	return nil, fmt.Errorf("record: unknown format %q", format)
}

// Carries tells whether a file of format carries codec c as it is: MP4 and MOV carry every
// codec of the bus; FLV and AVI carry H.264, H.265, AAC and MP3 (no Opus).
func Carries(format string, c media.Codec) bool {
	switch format {
	case FormatFLV:
		return flv.Carries(c)
	case FormatAVI:
		return avi.Carries(c)
	}
	return true
}

// Repair makes a file cut by a crash readable: it truncates it to its last whole fragment,
// chunk or tag and writes the index the format needs. It returns the media duration kept.
func Repair(format string, f *os.File) (time.Duration, error) {
	switch format {
	case FormatMP4, FormatMOV:
		return RepairMP4(f)
	case FormatFLV:
		return repairFLV(f)
	case FormatAVI:
		return repairAVI(f)
	}
	return 0, fmt.Errorf("record: unknown format %q", format)
}

// counter counts the bytes written through it.
type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// clock turns unit timestamps into file time: zero at the file's first unit.
type clock struct {
	tracks []media.Track
	based  bool
	base   time.Duration
	end    time.Duration
}

// at returns the unit's DTS as a duration on the stream's timeline.
func (c *clock) at(au *media.AccessUnit) time.Duration {
	rate := 90000
	if au.Track >= 0 && au.Track < len(c.tracks) && c.tracks[au.Track].ClockRate > 0 {
		rate = c.tracks[au.Track].ClockRate
	}
	return time.Duration(media.Rescale(au.DTS, rate, int(time.Second)))
}

// admit tells whether au belongs to the file (not before its first unit) and advances the end.
func (c *clock) admit(au *media.AccessUnit) bool {
	t := c.at(au)
	if !c.based {
		c.based, c.base = true, t
	}
	if t < c.base {
		return false
	}
	if d := t - c.base; d > c.end {
		c.end = d
	}
	return true
}
