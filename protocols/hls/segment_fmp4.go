package hls

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/bluenviron/mediacommon/v2/pkg/formats/fmp4"
	"github.com/bluenviron/mediacommon/v2/pkg/formats/mp4"

	"github.com/sluicemedia/sluice/internal/ingest"
	"github.com/sluicemedia/sluice/internal/media"
)

// errNoTracks is returned when a rendition has no track sluice carries.
var errNoTracks = errors.New("no supported track (H.264, H.265, AAC, MP3, Opus)")

// fmp4Reader reads fMP4 segments (moof/mdat) against the init segment of EXT-X-MAP, with
// mediacommon's reader. Timestamps come from each fragment's tfdt and the sample durations.
type fmp4Reader struct {
	tracks   []media.Track
	byID     map[int]*fmp4Track
	announce bool // tracks to announce with the next segment
}

// fmp4Track converts the samples of one track of the init segment.
type fmp4Track struct {
	idx       int    // index in fmp4Reader.tracks
	timescale uint32 // mdhd timescale
	video     *ingest.VideoFixer
	keyed     bool
}

// newFMP4Reader reads an init segment. Tracks of codecs sluice does not carry are left out.
func newFMP4Reader(init []byte) (r *fmp4Reader, err error) {
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, fmt.Errorf("init segment: invalid: %v", p)
		}
	}()
	var in fmp4.Init
	if err := in.Unmarshal(bytes.NewReader(init)); err != nil {
		return nil, fmt.Errorf("init segment: %w", err)
	}
	r = &fmp4Reader{byID: map[int]*fmp4Track{}, announce: true}
	for _, it := range in.Tracks {
		if it.TimeScale == 0 {
			continue
		}
		t := &fmp4Track{idx: len(r.tracks), timescale: it.TimeScale}
		tr := media.Track{ID: t.idx}
		switch c := it.Codec.(type) {
		case *mp4.CodecH264:
			t.video = ingest.NewVideoFixer(media.CodecH264, nil, c.SPS, c.PPS)
			tr.Codec, tr.ClockRate, tr.Params = media.CodecH264, 90000, t.video.Params()
		case *mp4.CodecH265:
			t.video = ingest.NewVideoFixer(media.CodecH265, c.VPS, c.SPS, c.PPS)
			tr.Codec, tr.ClockRate, tr.Params = media.CodecH265, 90000, t.video.Params()
		case *mp4.CodecMPEG4Audio:
			asc, err := c.Config.Marshal()
			if err != nil || c.Config.SampleRate <= 0 {
				continue
			}
			tr.Codec, tr.ClockRate = media.CodecAAC, c.Config.SampleRate
			tr.Params = media.Params{AudioConfig: asc, SampleRate: c.Config.SampleRate, Channels: c.Config.ChannelCount}
		case *mp4.CodecMPEG1Audio:
			if c.SampleRate <= 0 {
				continue
			}
			tr.Codec, tr.ClockRate = media.CodecMP3, c.SampleRate
			tr.Params = media.Params{SampleRate: c.SampleRate, Channels: c.ChannelCount}
		case *mp4.CodecOpus:
			ch := max(c.ChannelCount, 1)
			tr.Codec, tr.ClockRate = media.CodecOpus, 48000
			tr.Params = media.Params{SampleRate: 48000, Channels: ch}
		default:
			continue
		}
		if t.video != nil && !t.video.Ready() {
			return nil, fmt.Errorf("init segment: %s track %d without parameter sets", tr.Codec, it.ID)
		}
		r.tracks = append(r.tracks, tr)
		r.byID[it.ID] = t
	}
	if len(r.tracks) == 0 {
		return nil, errNoTracks
	}
	return r, nil
}

func (r *fmp4Reader) segment(b []byte) (tracks []media.Track, units []*media.AccessUnit, err error) {
	defer func() {
		if p := recover(); p != nil {
			tracks, units, err = nil, nil, fmt.Errorf("segment: invalid: %v", p)
		}
	}()
	var parts fmp4.Parts
	if err := parts.Unmarshal(b); err != nil {
		return nil, nil, fmt.Errorf("segment: %w", err)
	}
	for _, part := range parts {
		for _, pt := range part.Tracks {
			t := r.byID[pt.ID]
			if t == nil {
				continue
			}
			dts := pt.BaseTime
			for _, s := range pt.Samples {
				if au := r.unit(t, int64(dts), int64(s.PTSOffset), s); au != nil {
					units = append(units, au)
				}
				dts += uint64(s.Duration)
			}
		}
	}
	if r.announce {
		r.announce = false
		tracks = r.tracks
	}
	return tracks, units, nil
}

// unit converts one sample; nil when it is dropped.
func (r *fmp4Reader) unit(t *fmp4Track, dts, cto int64, s *fmp4.Sample) *media.AccessUnit {
	tr := &r.tracks[t.idx]
	ts := int64(t.timescale)
	au := &media.AccessUnit{Track: t.idx, Key: true,
		DTS: media.Rescale(dts, int(ts), tr.ClockRate), PTS: media.Rescale(dts+cto, int(ts), tr.ClockRate)}
	if t.video == nil {
		if len(s.Payload) == 0 {
			return nil
		}
		au.Payload = [][]byte{s.Payload}
		return au
	}
	nalus, err := s.GetH264() // AVCC framing: the same for H.265
	if err != nil {
		return nil
	}
	var changed bool
	au.Payload, au.Key, changed = t.video.Fix(nalus)
	if changed {
		tr.Params = t.video.Params()
		r.announce = true
	}
	if len(au.Payload) == 0 || (!t.keyed && !au.Key) {
		return nil
	}
	t.keyed = true
	return au
}
