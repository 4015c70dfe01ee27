package rtsp

import (
	"time"

	"github.com/sluicemedia/sluice/internal/media"
)

// rtpClock unwraps one track's 32-bit RTP timestamps into ticks of its RTP clock since the
// session's start.
type rtpClock struct {
	started bool
	prev    uint32
	ts      int64
}

// sessionClock aligns the tracks of one session. The first track to send is the leading one:
// its first timestamp is zero. Another track starts where the leading track is now, judged by
// the wall-clock time since the leading track's last packet.
type sessionClock struct {
	lead     *rtpClock
	leadRate int
	leadTS   int64     // the leading track's latest timestamp
	leadAt   time.Time // when it arrived
}

// decode returns the timestamp of a packet of the track whose clock is c and whose RTP clock
// rate is rate, arriving at now.
func (s *sessionClock) decode(c *rtpClock, rate int, ts uint32, now time.Time) int64 {
	if !c.started {
		c.started, c.prev = true, ts
		if s.lead == nil {
			s.lead, s.leadRate = c, rate
			c.ts = 0
		} else {
			c.ts = media.Rescale(s.leadTS, s.leadRate, rate) +
				media.Rescale(int64(now.Sub(s.leadAt)), int(time.Second), rate)
		}
	} else {
		// A difference of up to 2^31 ticks either way is a step; beyond, the counter wrapped.
		c.ts += int64(int32(ts - c.prev))
		c.prev = ts
	}
	if c == s.lead {
		s.leadTS, s.leadAt = c.ts, now
	}
	return c.ts
}
