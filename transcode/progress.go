package transcode

import (
	"strconv"
	"strings"
	"time"
)

// Progress is ffmpeg's last progress report.
type Progress struct {
	// Frame is the number of video frames output so far.
	Frame int64
	// FPS is the output frame rate and Speed the ratio of media time to wall time (1 is
	// real time), as ffmpeg reports them.
	FPS, Speed float64
	// OutTime is the output's media time so far.
	OutTime time.Duration
	// At is when the report arrived; zero before the first.
	At time.Time
}

// progressParser reads ffmpeg's -progress feed: blocks of key=value lines, each ended by
// progress=continue (or progress=end). Values it cannot read ("N/A") keep the last ones.
type progressParser struct {
	cur Progress
}

// line takes one line of the feed; at the end of a block it returns the report.
func (p *progressParser) line(s string) (Progress, bool) {
	k, v, ok := strings.Cut(strings.TrimSpace(s), "=")
	if !ok {
		return Progress{}, false
	}
	v = strings.TrimSpace(v)
	switch k {
	case "frame":
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			p.cur.Frame = n
		}
	case "fps":
		if f, ok := parseFloat(v); ok {
			p.cur.FPS = f
		}
	case "speed":
		if f, ok := parseFloat(strings.TrimSuffix(v, "x")); ok {
			p.cur.Speed = f
		}
	case "out_time_us", "out_time_ms": // both are microseconds (ffmpeg's naming bug)
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 && n < 1<<53 {
			p.cur.OutTime = time.Duration(n) * time.Microsecond
		}
	case "progress":
		return p.cur, true
	}
	return Progress{}, false
}

func parseFloat(s string) (float64, bool) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f != f || f > 1e9 {
		return 0, false
	}
	return f, true
}
