package mpegts

import (
	"encoding/binary"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/nal"
)

// esStream is the state of one elementary stream: PES reassembly and codec parameters.
type esStream struct {
	pid      uint16
	codec    media.Codec
	track    media.Track
	trackID  int  // -1 until the tracks are known, or when left out
	ready    bool // parameters known
	disabled bool // a variant this package does not carry (MPEG audio other than layer 3)

	cc   int    // last continuity counter, -1 when unknown
	pes  []byte // reassembly buffer, reused; the units get their own copies
	open bool
	want int // total PES size when its header gives one, else 0

	fix   *nal.Fixer // video: parameter sets and the key-frame gate
	nalus [][]byte
}

// newESStream returns the stream of a PMT entry, or nil when its codec is not carried.
func newESStream(es pmtStream) *esStream {
	c := codecOf(es)
	if c == media.CodecUnknown {
		return nil
	}
	s := &esStream{pid: es.pid, codec: c, cc: -1, trackID: -1}
	s.track.Codec = c
	switch c {
	case media.CodecH264, media.CodecH265:
		s.track.ClockRate = clock90k
	case media.CodecOpus:
		// Opus always runs at 48 kHz (RFC 7845 section 4); the channel count is in the PMT.
		ch := es.opusChannels
		if ch == 0 {
			ch = 2
		}
		s.track.ClockRate = 48000
		s.track.Params = media.Params{SampleRate: 48000, Channels: ch}
		s.ready = true
	}
	return s
}

// onStreamPacket reassembles PES packets, dropping the one in progress on a continuity gap.
func (d *Demuxer) onStreamPacket(s *esStream, p packet) {
	if !p.hasPayload {
		return // the continuity counter only counts packets with payload
	}
	if s.cc >= 0 && !p.discontinuity {
		if int(p.cc) == s.cc {
			return // a duplicate packet (ISO/IEC 13818-1 2.4.3.3)
		}
		if int(p.cc) != (s.cc+1)&0x0f {
			d.stats.CCErrors++
			if s.open {
				s.open = false
				d.stats.DroppedPES++
			}
		}
	}
	s.cc = int(p.cc)
	switch {
	case p.pusi:
		switch {
		case s.open && s.want > 0 && len(s.pes) < s.want:
			// Shorter than its declared length: a packet was lost without a gap in the
			// continuity counter (a damaged or spliced source).
			s.open = false
			d.stats.DroppedPES++
		case s.open:
			d.completePES(s)
		}
		if !d.appendPES(s, s.pes[:0], p.payload) {
			return
		}
		s.open, s.want = true, 0
	case !s.open:
		return
	case len(s.pes)+len(p.payload) > MaxPESSize:
		d.dropPES(s)
		return
	default:
		if !d.appendPES(s, s.pes, p.payload) {
			return
		}
	}
	if s.want == 0 && len(s.pes) >= 6 {
		if n := int(binary.BigEndian.Uint16(s.pes[4:])); n != 0 {
			s.want = 6 + n
		}
	}
	if s.want > 0 && len(s.pes) >= s.want {
		s.pes = s.pes[:s.want]
		d.completePES(s)
	}
}

// appendPES sets s.pes to buf with payload appended, keeping the demuxer's buffers within
// maxHeldPES; past it the PES is dropped (false).
func (d *Demuxer) appendPES(s *esStream, buf, payload []byte) bool {
	old := cap(s.pes)
	s.pes = append(buf, payload...)
	if d.pesHeld += cap(s.pes) - old; d.pesHeld > maxHeldPES {
		d.dropPES(s)
		return false
	}
	return true
}

// dropPES drops the PES s is assembling, counting it, and releases its buffer: a PES that
// grew past a cap is broken or hostile, and its memory is not kept for the next one.
func (d *Demuxer) dropPES(s *esStream) {
	d.pesHeld -= cap(s.pes)
	s.pes, s.open = nil, false
	d.stats.DroppedPES++
}

// completePES decodes the timestamps of a whole PES packet and hands its data to the codec.
func (d *Demuxer) completePES(s *esStream) {
	s.open = false
	h, err := parsePESHeader(s.pes)
	if err != nil || !h.hasPTS {
		d.stats.DroppedPES++
		return
	}
	// DTS is absent when it equals PTS.
	dts := h.pts
	if h.hasDTS {
		dts = h.dts
	}
	dts = d.clock.unwrap(dts)
	pts := near(dts, h.pts)
	if !d.final {
		if !d.probing {
			d.probing, d.probeStart = true, dts
		}
		d.probeLast = dts
	}
	data := s.pes[h.dataOff:]
	if len(data) > 0 {
		switch s.codec {
		case media.CodecH264, media.CodecH265:
			d.onVideo(s, pts, dts, data)
		case media.CodecAAC:
			d.onAAC(s, pts, data)
		case media.CodecMP3:
			d.onMPEGAudio(s, pts, data)
		case media.CodecOpus:
			d.onOpus(s, pts, data)
		}
	}
	if !d.final {
		d.checkReady()
	}
}
