package rtsp

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"

	"github.com/bluenviron/gortsplib/v4/pkg/description"
	"github.com/bluenviron/gortsplib/v4/pkg/format"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/mpeg4audio"
	"github.com/pion/rtp"

	"github.com/sluicemedia/sluice/internal/media"
)

// outTrack packetises the units of one track for Push.
type outTrack struct {
	media   *description.Media
	clock   int    // the track's clock rate
	rtpRate int    // the format's RTP clock rate
	base    uint32 // random RTP timestamp offset (RFC 3550 5.1)
	encode  func(au *media.AccessUnit) ([]*rtp.Packet, error)
}

// newOutTrack returns the RTP format and packetiser of a track; payload types are dynamic
// (96 and up), but MP3's is the static 14.
func newOutTrack(t media.Track, pt uint8) (*outTrack, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	o := &outTrack{clock: t.ClockRate, base: binary.BigEndian.Uint32(b[:])}
	var f format.Format
	switch t.Codec {
	case media.CodecH264:
		hf := &format.H264{PayloadTyp: pt, SPS: t.Params.SPS, PPS: t.Params.PPS, PacketizationMode: 1}
		enc, err := hf.CreateEncoder()
		if err != nil {
			return nil, err
		}
		o.encode = func(au *media.AccessUnit) ([]*rtp.Packet, error) { return enc.Encode(au.Payload) }
		f = hf
	case media.CodecH265:
		hf := &format.H265{PayloadTyp: pt, VPS: t.Params.VPS, SPS: t.Params.SPS, PPS: t.Params.PPS}
		enc, err := hf.CreateEncoder()
		if err != nil {
			return nil, err
		}
		o.encode = func(au *media.AccessUnit) ([]*rtp.Packet, error) { return enc.Encode(au.Payload) }
		f = hf
	case media.CodecAAC:
		var asc mpeg4audio.AudioSpecificConfig
		if err := asc.Unmarshal(t.Params.AudioConfig); err != nil {
			return nil, fmt.Errorf("AAC configuration: %w", err)
		}
		af := &format.MPEG4Audio{PayloadTyp: pt, ProfileLevelID: 1, Config: &asc,
			SizeLength: 13, IndexLength: 3, IndexDeltaLength: 3}
		enc, err := af.CreateEncoder()
		if err != nil {
			return nil, err
		}
		o.encode = func(au *media.AccessUnit) ([]*rtp.Packet, error) { return enc.Encode(au.Payload) }
		f = af
	case media.CodecMP3:
		mf := &format.MPEG1Audio{}
		enc, err := mf.CreateEncoder()
		if err != nil {
			return nil, err
		}
		// gortsplib advances MP3 timestamps by samples within one call although the RTP clock
		// is 90 kHz: give it one frame at a time.
		o.encode = func(au *media.AccessUnit) ([]*rtp.Packet, error) {
			if len(au.Payload) != 1 {
				return nil, fmt.Errorf("MP3 unit with %d frames", len(au.Payload))
			}
			return enc.Encode(au.Payload)
		}
		f = mf
	case media.CodecOpus:
		ch := t.Params.Channels
		if ch <= 0 {
			ch = 2
		}
		of := &format.Opus{PayloadTyp: pt, ChannelCount: ch}
		enc, err := of.CreateEncoder()
		if err != nil {
			return nil, err
		}
		o.encode = func(au *media.AccessUnit) ([]*rtp.Packet, error) {
			if len(au.Payload) != 1 {
				return nil, fmt.Errorf("opus unit with %d packets", len(au.Payload))
			}
			p, err := enc.Encode(au.Payload[0])
			if err != nil {
				return nil, err
			}
			return []*rtp.Packet{p}, nil
		}
		f = of
	default:
		return nil, fmt.Errorf("codec %s is not carried over RTSP", t.Codec)
	}
	if o.clock <= 0 {
		return nil, fmt.Errorf("%s track without a clock rate", t.Codec)
	}
	o.rtpRate = f.ClockRate()
	typ := description.MediaTypeAudio
	if t.Codec.IsVideo() {
		typ = description.MediaTypeVideo
	}
	o.media = &description.Media{Type: typ, Formats: []format.Format{f}}
	return o, nil
}

// packets packetises au presented at pts (ticks of the track's clock).
func (o *outTrack) packets(au *media.AccessUnit, pts int64) ([]*rtp.Packet, error) {
	pkts, err := o.encode(au)
	if err != nil {
		return nil, err
	}
	ts := o.base + uint32(media.Rescale(pts, o.clock, o.rtpRate))
	for _, p := range pkts {
		p.Timestamp += ts
	}
	return pkts, nil
}
