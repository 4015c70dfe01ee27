package rtsp

import (
	"errors"
	"fmt"

	"github.com/bluenviron/gortsplib/v4/pkg/format"
	"github.com/bluenviron/gortsplib/v4/pkg/format/rtph264"
	"github.com/bluenviron/gortsplib/v4/pkg/format/rtph265"
	"github.com/bluenviron/gortsplib/v4/pkg/format/rtpmpeg1audio"
	"github.com/bluenviron/gortsplib/v4/pkg/format/rtpmpeg4audio"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/mpeg4audio"
	"github.com/pion/rtp"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/mp3"
)

// errMore means the packet did not complete a unit.
var errMore = errors.New("need more packets")

// inTrack is one format of an RTSP session that ingest carries: its depacketiser and its
// normaliser.
type inTrack struct {
	name    string // the format's codec name, for logs
	rtpRate int    // the format's RTP clock rate
	// track holds Codec, ClockRate and Params; its ID is set when the tracks are announced.
	track media.Track
	id    int  // index among the Stream's tracks; -1 until announced, or when left out
	ready bool // parameters known
	off   bool // a variant that is not carried (MPEG audio other than layer 3)
	clk   rtpClock

	decode func(pkt *rtp.Packet) ([][]byte, error) // RTP payload to NAL units or audio frames
	video  *videoTrack
	// frameSamples is the duration of an AAC frame in samples.
	frameSamples int64
	errs         int64 // packets the depacketiser refused
}

// newInTrack returns the ingest of a format, or an error when the format is not carried.
func newInTrack(f format.Format) (*inTrack, error) {
	t := &inTrack{name: f.Codec(), rtpRate: f.ClockRate(), id: -1}
	if t.rtpRate <= 0 {
		return nil, fmt.Errorf("%s: no clock rate", t.name)
	}
	switch f := f.(type) {
	case *format.H264:
		d, err := f.CreateDecoder()
		if err != nil {
			return nil, fmt.Errorf("H264: %w", err)
		}
		t.decode = wrapDecoder(d.Decode, rtph264.ErrMorePacketsNeeded, rtph264.ErrNonStartingPacketAndNoPrevious)
		sps, pps := f.SafeParams()
		t.video = newVideoTrack(media.CodecH264, nil, sps, pps)
		t.track = media.Track{Codec: media.CodecH264, ClockRate: 90000}
	case *format.H265:
		d, err := f.CreateDecoder()
		if err != nil {
			return nil, fmt.Errorf("H265: %w", err)
		}
		t.decode = wrapDecoder(d.Decode, rtph265.ErrMorePacketsNeeded, rtph265.ErrNonStartingPacketAndNoPrevious)
		vps, sps, pps := f.SafeParams()
		t.video = newVideoTrack(media.CodecH265, vps, sps, pps)
		t.track = media.Track{Codec: media.CodecH265, ClockRate: 90000}
	case *format.MPEG4Audio:
		if f.Config == nil || f.Config.SampleRate <= 0 {
			return nil, errors.New("MPEG-4 audio: no AudioSpecificConfig in the SDP")
		}
		asc, err := f.Config.Marshal()
		if err != nil {
			return nil, fmt.Errorf("MPEG-4 audio: %w", err)
		}
		d, err := f.CreateDecoder()
		if err != nil {
			return nil, fmt.Errorf("MPEG-4 audio: %w", err)
		}
		t.decode = wrapDecoder(d.Decode, rtpmpeg4audio.ErrMorePacketsNeeded, nil)
		t.track = media.Track{Codec: media.CodecAAC, ClockRate: f.Config.SampleRate, Params: media.Params{
			AudioConfig: asc, SampleRate: f.Config.SampleRate, Channels: f.Config.ChannelCount,
		}}
		t.frameSamples = mpeg4audio.SamplesPerAccessUnit
		if f.Config.FrameLengthFlag {
			t.frameSamples = 960
		}
		t.ready = true
	case *format.MPEG1Audio:
		d, err := f.CreateDecoder()
		if err != nil {
			return nil, fmt.Errorf("MPEG-1 audio: %w", err)
		}
		t.decode = wrapDecoder(d.Decode, rtpmpeg1audio.ErrMorePacketsNeeded, rtpmpeg1audio.ErrNonStartingPacketAndNoPrevious)
		t.track = media.Track{Codec: media.CodecMP3} // the rate and channels come with the first frame
	case *format.Opus:
		d, err := f.CreateDecoder()
		if err != nil {
			return nil, fmt.Errorf("opus: %w", err)
		}
		t.decode = func(pkt *rtp.Packet) ([][]byte, error) {
			b, err := d.Decode(pkt)
			if err != nil {
				return nil, err
			}
			return [][]byte{b}, nil
		}
		ch := f.ChannelCount
		if ch <= 0 {
			ch = 2
		}
		t.track = media.Track{Codec: media.CodecOpus, ClockRate: 48000,
			Params: media.Params{SampleRate: 48000, Channels: ch}}
		t.ready = true
	default:
		return nil, fmt.Errorf("%s is not carried", t.name)
	}
	if t.video != nil {
		t.ready = t.video.ready()
	}
	return t, nil
}

// wrapDecoder maps a depacketiser's "need more" errors to errMore.
func wrapDecoder(dec func(*rtp.Packet) ([][]byte, error), more, noPrev error) func(*rtp.Packet) ([][]byte, error) {
	return func(pkt *rtp.Packet) ([][]byte, error) {
		b, err := dec(pkt)
		if err != nil {
			if errors.Is(err, more) || (noPrev != nil && errors.Is(err, noPrev)) {
				return nil, errMore
			}
			return nil, err
		}
		return b, nil
	}
}

// units depacketises pkt, presented at pts (ticks of the RTP clock), and appends the units it
// completes to dst. Their Track field is not set. A packet that completes nothing returns dst
// and errMore; one the depacketiser refuses returns its error.
func (t *inTrack) units(pkt *rtp.Packet, pts int64, dst []*media.AccessUnit) ([]*media.AccessUnit, error) {
	if t.off {
		return dst, errMore
	}
	frames, err := t.decode(pkt)
	if err != nil {
		return dst, err
	}
	if t.video != nil {
		au, err := t.video.unit(frames, media.Rescale(pts, t.rtpRate, 90000))
		if err != nil {
			return dst, err
		}
		t.ready = t.video.ready()
		return append(dst, au), nil
	}
	return t.audioUnits(frames, pts, dst)
}

// audioUnits makes one unit per audio frame, each with its share of one copy of the frames.
func (t *inTrack) audioUnits(frames [][]byte, pts int64, dst []*media.AccessUnit) ([]*media.AccessUnit, error) {
	size := 0
	for _, f := range frames {
		size += len(f)
	}
	if size == 0 {
		return dst, errMore
	}
	if t.track.Codec == media.CodecMP3 && !t.ready && !t.configureMP3(frames[0]) {
		return dst, errMore
	}
	rate := t.track.ClockRate
	ts := media.Rescale(pts, t.rtpRate, rate)
	data := make([]byte, size)
	aus := make([]media.AccessUnit, 0, len(frames))
	off := 0
	for _, f := range frames {
		if len(f) == 0 {
			continue
		}
		var dur int64
		switch t.track.Codec {
		case media.CodecAAC:
			dur = t.frameSamples
		case media.CodecMP3:
			h, err := mp3.Parse(f)
			if err != nil || h.SampleRate != rate {
				t.errs++ // not a frame of this stream's kind: the clock cannot follow it
				continue
			}
			dur = int64(h.SampleCount())
		}
		n := copy(data[off:], f)
		aus = append(aus, media.AccessUnit{PTS: ts, DTS: ts, Key: true, Payload: [][]byte{data[off : off+n : off+n]}})
		off += n
		ts += dur
	}
	for i := range aus {
		dst = append(dst, &aus[i])
	}
	return dst, nil
}

// configureMP3 takes the sample rate and channels from the first frame; MPEG audio layers 1
// and 2 are not carried and turn the track off.
func (t *inTrack) configureMP3(frame []byte) bool {
	h, err := mp3.Parse(frame)
	if errors.Is(err, mp3.ErrNotLayer3) {
		t.off = true
		return false
	}
	if err != nil {
		t.errs++
		return false
	}
	t.track.ClockRate = h.SampleRate
	t.track.Params = h.Params()
	t.ready = true
	return true
}
