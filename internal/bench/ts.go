package bench

import (
	"fmt"
	"time"

	"github.com/sluicemedia/sluice/internal/opt"
)

// tsSize is the size of an MPEG-TS packet; SRT carries seven of them per payload.
const (
	tsSize    = 188
	chunkSize = 7 * tsSize
)

// tsPacket is what the bench needs of one MPEG-TS packet.
type tsPacket struct {
	pid     uint16
	cc      uint8
	payload []byte // nil when the packet carries none
	pusi    bool
	rai     bool  // random_access_indicator: ffmpeg sets it on key frames
	pcr     int64 // 90 kHz PCR base, -1 when absent
}

// parseTS reads one 188-byte packet; ok is false when it is not one.
func parseTS(b []byte) (p tsPacket, ok bool) {
	if len(b) < tsSize || b[0] != 0x47 {
		return p, false
	}
	p.pid = uint16(b[1]&0x1f)<<8 | uint16(b[2])
	p.pusi = b[1]&0x40 != 0
	p.cc = b[3] & 0x0f
	p.pcr = -1
	afc := b[3] >> 4 & 3
	off := 4
	if afc&2 != 0 {
		alen := int(b[4])
		if 5+alen > tsSize {
			return p, false
		}
		if alen > 0 {
			flags := b[5]
			p.rai = flags&0x40 != 0
			if flags&0x10 != 0 && alen >= 7 {
				p.pcr = int64(b[6])<<25 | int64(b[7])<<17 | int64(b[8])<<9 | int64(b[9])<<1 | int64(b[10])>>7
			}
		}
		off = 5 + alen
	}
	if afc&1 != 0 && off < tsSize {
		p.payload = b[off:tsSize]
	}
	return p, true
}

// videoPTS returns the PTS (90 kHz) of a video PES that starts in payload.
func videoPTS(payload []byte) (int64, bool) {
	if len(payload) < 14 || payload[0] != 0 || payload[1] != 0 || payload[2] != 1 {
		return 0, false
	}
	if payload[3]&0xf0 != 0xe0 || payload[7]&0x80 == 0 {
		return 0, false
	}
	q := payload[9:14]
	pts := int64(q[0]>>1&7)<<30 | int64(q[1])<<22 | int64(q[2]>>1)<<15 | int64(q[3])<<7 | int64(q[4]>>1)
	return pts, true
}

// ticks90k turns a 90 kHz count into a duration.
func ticks90k(t int64) time.Duration { return time.Duration(t) * time.Second / 90000 }

// TSCount counts what a receiver got: packets, video frames (PES starts) and continuity
// errors, which mean lost packets.
type TSCount struct {
	Packets  int
	Frames   int
	CCErrors int
	FirstPTS int64  // 90 kHz PTS of the first video frame received, -1 before one
	LastPTS  int64  // 90 kHz PTS of the last video frame received
	FirstErr string // the first continuity error: where and what, empty when none
	last     map[uint16]uint8
	onFrame  func(pts int64) // called with each video frame's PTS, when set
}

// Feed counts the whole packets of b (an SRT payload holds seven).
func (c *TSCount) Feed(b []byte) {
	if c.last == nil {
		c.last = map[uint16]uint8{}
		c.FirstPTS = -1
	}
	for len(b) >= tsSize {
		p, ok := parseTS(b[:tsSize])
		b = b[tsSize:]
		if !ok {
			c.CCErrors++
			continue
		}
		c.Packets++
		if p.pid == 0x1fff || p.payload == nil {
			continue // null packets and packets without payload do not advance the counter
		}
		if prev, seen := c.last[p.pid]; seen && p.cc != (prev+1)&0x0f && p.cc != prev {
			c.CCErrors++
			opt.Zero(&c.FirstErr, fmt.Sprintf("packet %d, pid %#x: counter %d after %d", c.Packets, p.pid, p.cc, prev))
		}
		c.last[p.pid] = p.cc
		if p.pusi {
			if pts, ok := videoPTS(p.payload); ok {
				c.Frames++
				if c.FirstPTS < 0 {
					c.FirstPTS = pts
				}
				c.LastPTS = pts
				if c.onFrame != nil {
					c.onFrame(pts)
				}
			}
		}
	}
}
