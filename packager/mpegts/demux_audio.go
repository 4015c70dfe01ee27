package mpegts

import (
	"errors"
	"fmt"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/mpeg4audio"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/opus"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/mp3"
)

// audioFrame locates one frame inside a PES's data and gives its duration in samples.
type audioFrame struct {
	off, end int
	samples  int64
}

// emitAudio copies the frames out of the reassembly buffer (one allocation for the PES) and
// emits one unit per frame, timed from the PES timestamp in the track's sample clock.
func (d *Demuxer) emitAudio(s *esStream, pts90 int64, es []byte, frames []audioFrame) {
	if len(frames) == 0 {
		return
	}
	data := make([]byte, frames[len(frames)-1].end)
	copy(data, es)
	aus := make([]media.AccessUnit, len(frames))
	payloads := make([][]byte, len(frames))
	ts := media.Rescale(pts90, clock90k, s.track.ClockRate)
	for i, f := range frames {
		payloads[i] = data[f.off:f.end:f.end]
		aus[i] = media.AccessUnit{PTS: ts, DTS: ts, Key: true, Payload: payloads[i : i+1 : i+1]}
		ts += f.samples
		d.emit(s, &aus[i])
	}
}

// frameBuf is scratch space for the frames of one PES; audio PES carry a handful.
type frameBuf [64]audioFrame

// onAAC splits ADTS into raw AAC frames; the first frame gives the AudioSpecificConfig.
func (d *Demuxer) onAAC(s *esStream, pts90 int64, es []byte) {
	var buf frameBuf
	frames := buf[:0]
	for off := 0; off < len(es) && len(frames) < len(buf); {
		h, err := parseADTS(es[off:])
		if err != nil {
			d.stats.DroppedUnits++
			break
		}
		if !s.ready {
			if err := s.configureAAC(h); err != nil {
				s.disabled = true
				return
			}
		}
		if h.sampleRate() != s.track.ClockRate {
			d.stats.DroppedUnits++ // the sample rate changed mid-stream; the clock cannot
			break
		}
		frames = append(frames, audioFrame{off: off + h.headerLen, end: off + h.frameLen, samples: aacSamplesPerFrame})
		off += h.frameLen
	}
	d.emitAudio(s, pts90, es, frames)
}

func (s *esStream) configureAAC(h adtsHeader) error {
	asc, err := mpeg4audio.AudioSpecificConfig{
		Type:         mpeg4audio.ObjectType(h.objectType),
		SampleRate:   h.sampleRate(),
		ChannelCount: h.channels(),
	}.Marshal()
	if err != nil {
		return fmt.Errorf("mpegts: PID %d: AAC configuration: %w", s.pid, err)
	}
	s.track.ClockRate = h.sampleRate()
	s.track.Params = media.Params{AudioConfig: asc, SampleRate: h.sampleRate(), Channels: h.channels()}
	s.ready = true
	return nil
}

// onMPEGAudio splits MPEG audio into frames; only layer 3 (MP3) is carried.
func (d *Demuxer) onMPEGAudio(s *esStream, pts90 int64, es []byte) {
	var buf frameBuf
	frames := buf[:0]
	for off := 0; off < len(es) && len(frames) < len(buf); {
		h, err := mp3.Parse(es[off:])
		if errors.Is(err, mp3.ErrNotLayer3) {
			if !s.ready {
				s.disabled = true // MPEG audio layer 1 or 2 has no codec here
			}
			return
		}
		if err != nil {
			d.stats.DroppedUnits++
			break
		}
		n := h.Len()
		if n <= 4 || off+n > len(es) || h.SampleRate != s.track.ClockRate && s.ready {
			d.stats.DroppedUnits++
			break
		}
		if !s.ready {
			s.track.ClockRate = h.SampleRate
			s.track.Params = h.Params()
			s.ready = true
		}
		frames = append(frames, audioFrame{off: off, end: off + n, samples: int64(h.SampleCount())})
		off += n
	}
	d.emitAudio(s, pts90, es, frames)
}

// onOpus splits the Opus access units of a PES (ETSI TS 102 366 annex: opus_control_header
// then one packet); trimming is not applied.
func (d *Demuxer) onOpus(s *esStream, pts90 int64, es []byte) {
	var buf frameBuf
	frames := buf[:0]
	for off := 0; off < len(es) && len(frames) < len(buf); {
		start, end, err := parseOpusHeader(es, off)
		if err != nil {
			d.stats.DroppedUnits++
			break
		}
		frames = append(frames, audioFrame{off: start, end: end, samples: opus.PacketDuration2(es[start:end])})
		off = end
	}
	d.emitAudio(s, pts90, es, frames)
}

// parseOpusHeader reads the control header at off and returns where its packet lies.
func parseOpusHeader(b []byte, off int) (start, end int, err error) {
	if len(b)-off < 3 || b[off] != 0x7f || b[off+1]&0xe0 != 0xe0 {
		return 0, 0, fmt.Errorf("mpegts: Opus control header prefix missing at %d", off)
	}
	flags := b[off+1]
	p := off + 2
	size := 0
	for {
		if p >= len(b) {
			return 0, 0, fmt.Errorf("mpegts: Opus control header truncated at %d", p)
		}
		v := b[p]
		p++
		size += int(v)
		if v != 0xff {
			break
		}
	}
	if flags&0x10 != 0 { // start_trim
		p += 2
	}
	if flags&0x08 != 0 { // end_trim
		p += 2
	}
	if flags&0x04 != 0 { // control_extension
		if p >= len(b) {
			return 0, 0, fmt.Errorf("mpegts: Opus control extension truncated at %d", p)
		}
		p += 1 + int(b[p])
	}
	if size == 0 || p+size > len(b) {
		return 0, 0, fmt.Errorf("mpegts: Opus packet of %d bytes at %d overruns %d", size, p, len(b))
	}
	return p, p + size, nil
}
