package fmp4

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/Eyevinn/mp4ff/mp4"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/mpeg4audio"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/nal"
)

// Reading fMP4 that came from the network (the HLS and DASH pulls): init segments into media
// tracks, media segments into samples. Every offset and size is checked against the buffer: a
// broken segment is an error, never a read outside it nor a panic.

// ErrInvalid is wrapped by the errors of the readers.
var ErrInvalid = errors.New("fmp4")

// MaxSamples bounds the samples read from one media segment.
const MaxSamples = 1 << 16

// MaxNALUnits bounds the NAL units split out of one sample.
const MaxNALUnits = 1024

// Box is one ISO BMFF box inside a buffer: its type and where it lies.
type Box struct {
	Type       string
	Start, End int // the whole box
	Body       int // start of the payload
}

// NextBox reads the box header at off. A size of 0 extends the box to the end of b; a size of
// 1 reads a 64-bit size. The box must lie within b.
func NextBox(b []byte, off int) (Box, error) {
	if off+8 > len(b) {
		return Box{}, fmt.Errorf("%w: box header at %d beyond %d bytes", ErrInvalid, off, len(b))
	}
	size := uint64(binary.BigEndian.Uint32(b[off:]))
	bx := Box{Type: string(b[off+4 : off+8]), Start: off, Body: off + 8}
	switch size {
	case 0:
		size = uint64(len(b) - off)
	case 1:
		if off+16 > len(b) {
			return Box{}, fmt.Errorf("%w: large box header at %d beyond %d bytes", ErrInvalid, off, len(b))
		}
		size = binary.BigEndian.Uint64(b[off+8:])
		bx.Body = off + 16
	}
	if size < uint64(bx.Body-off) || size > uint64(len(b)-off) {
		return Box{}, fmt.Errorf("%w: %q box of %d bytes at %d in %d", ErrInvalid, bx.Type, size, off, len(b))
	}
	bx.End = off + int(size)
	return bx, nil
}

// decodeBox decodes a box with mp4ff, turning a panic of the library into an error: a segment
// from the network must never take the server down.
func decodeBox(b []byte, bx Box) (out mp4.Box, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("%w: %q box: %v", ErrInvalid, bx.Type, r)
		}
	}()
	out, err = mp4.DecodeBox(uint64(bx.Start), bytes.NewReader(b[bx.Start:bx.End]))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return out, nil
}

// InitTrack is a track of an init segment that sluice carries.
type InitTrack struct {
	ID        uint32      // track_ID
	Timescale uint32      // mdhd, never 0
	Track     media.Track // codec, clock rate and parameters; Track.ID is left 0
	// trex defaults for the fragments
	defaultDuration, defaultSize uint32
}

// ReadInit reads an init segment (ftyp, moov) and returns its tracks that sluice carries, in
// moov order: H.264 (avc1/avc3), H.265 (hvc1/hev1) with their parameter sets, AAC with its
// AudioSpecificConfig, MP3, Opus. Other tracks, and video tracks without parameter sets, are
// left out; none is not an error.
func ReadInit(b []byte) ([]InitTrack, error) {
	for off := 0; off < len(b); {
		bx, err := NextBox(b, off)
		if err != nil {
			return nil, err
		}
		off = bx.End
		if bx.Type != "moov" {
			continue
		}
		v, err := decodeBox(b, bx)
		if err != nil {
			return nil, err
		}
		moov, ok := v.(*mp4.MoovBox)
		if !ok {
			return nil, fmt.Errorf("%w: moov decodes as %T", ErrInvalid, v)
		}
		return initTracks(moov), nil
	}
	return nil, fmt.Errorf("%w: init segment without moov", ErrInvalid)
}

func initTracks(moov *mp4.MoovBox) []InitTrack {
	var out []InitTrack
	for _, trak := range moov.Traks {
		if trak == nil || trak.Tkhd == nil || trak.Mdia == nil || trak.Mdia.Mdhd == nil ||
			trak.Mdia.Minf == nil || trak.Mdia.Minf.Stbl == nil || trak.Mdia.Minf.Stbl.Stsd == nil {
			continue
		}
		it := InitTrack{ID: trak.Tkhd.TrackID, Timescale: trak.Mdia.Mdhd.Timescale}
		if it.Timescale == 0 || !describeTrack(trak.Mdia.Minf.Stbl.Stsd, &it.Track) {
			continue
		}
		if moov.Mvex != nil {
			for _, trex := range moov.Mvex.Trexs {
				if trex != nil && trex.TrackID == it.ID {
					it.defaultDuration, it.defaultSize = trex.DefaultSampleDuration, trex.DefaultSampleSize
				}
			}
		}
		out = append(out, it)
	}
	return out
}

// describeTrack fills the codec, clock rate and parameters of a sample description it
// supports.
func describeTrack(stsd *mp4.StsdBox, t *media.Track) bool {
	switch {
	case stsd.AvcX != nil && stsd.AvcX.AvcC != nil:
		c := stsd.AvcX.AvcC
		if len(c.SPSnalus) == 0 || len(c.PPSnalus) == 0 {
			return false
		}
		t.Codec, t.ClockRate = media.CodecH264, 90000
		t.Params = videoParams(media.CodecH264, nil, c.SPSnalus[0], c.PPSnalus[0])
	case stsd.HvcX != nil && stsd.HvcX.HvcC != nil:
		var vps, sps, pps []byte
		for _, a := range stsd.HvcX.HvcC.NaluArrays {
			for _, n := range a.Nalus {
				switch nal.Classify(media.CodecH265, n) {
				case nal.VPS:
					vps = first(vps, n)
				case nal.SPS:
					sps = first(sps, n)
				case nal.PPS:
					pps = first(pps, n)
				}
			}
		}
		if vps == nil || sps == nil || pps == nil {
			return false
		}
		t.Codec, t.ClockRate = media.CodecH265, 90000
		t.Params = videoParams(media.CodecH265, vps, sps, pps)
	case stsd.Mp4a != nil && stsd.Mp4a.Esds != nil && stsd.Mp4a.Esds.DecConfigDescriptor != nil:
		return describeMP4A(stsd.Mp4a, t)
	case stsd.Opus != nil:
		ch := int(stsd.Opus.ChannelCount)
		if stsd.Opus.Dops != nil {
			ch = int(stsd.Opus.Dops.OutputChannelCount)
		}
		t.Codec, t.ClockRate = media.CodecOpus, 48000
		t.Params = media.Params{SampleRate: 48000, Channels: max(ch, 1)}
	default:
		return false
	}
	return true
}

// videoParams returns the parameters of a video track: its parameter sets (copies) and the
// picture size its SPS gives.
func videoParams(c media.Codec, vps, sps, pps []byte) media.Params {
	p := media.Params{VPS: bytes.Clone(vps), SPS: bytes.Clone(sps), PPS: bytes.Clone(pps)}
	p.Width, p.Height = nal.VideoSize(c, p.SPS)
	return p
}

// Object type indications of an esds (ISO/IEC 14496-1 table 5).
const (
	otiAAC      = 0x40
	otiMPEG2AAC = 0x67 // MPEG-2 AAC LC
	otiMP3      = 0x6b // MPEG-1 audio
	otiMPEG2MP3 = 0x69 // MPEG-2 audio (lower sampling rates)
)

func describeMP4A(e *mp4.AudioSampleEntryBox, t *media.Track) bool {
	dc := e.Esds.DecConfigDescriptor
	switch dc.ObjectType {
	case otiAAC, otiMPEG2AAC:
		if dc.DecSpecificInfo == nil {
			return false
		}
		var c mpeg4audio.AudioSpecificConfig
		if err := c.Unmarshal(dc.DecSpecificInfo.DecConfig); err != nil || c.SampleRate <= 0 {
			return false
		}
		t.Codec, t.ClockRate = media.CodecAAC, c.SampleRate
		t.Params = media.Params{AudioConfig: bytes.Clone(dc.DecSpecificInfo.DecConfig), SampleRate: c.SampleRate, Channels: c.ChannelCount}
	case otiMP3, otiMPEG2MP3:
		if e.SampleRate == 0 {
			return false
		}
		t.Codec, t.ClockRate = media.CodecMP3, int(e.SampleRate)
		t.Params = media.Params{SampleRate: int(e.SampleRate), Channels: max(int(e.ChannelCount), 1)}
	default:
		return false
	}
	return true
}

func first(have, n []byte) []byte {
	if have != nil {
		return have
	}
	return n
}

// Sample is one sample of a media segment: decode time, duration and composition offset in
// its track's timescale, and its bytes (a slice of the segment).
type Sample struct {
	Track int // index of its track in the reader's tracks (0 for ReadSamples)
	DTS   uint64
	CTO   int64
	Dur   uint32
	Data  []byte
}

// ReadSamples reads the samples of track t from a media segment: every moof/mdat pair in it
// (styp, sidx, prft, emsg and other boxes are skipped). Decode times start at each fragment's
// tfdt, or continue from the previous fragment (next, the decode time after the previous
// segment's last sample) when a fragment has none. It returns the decode time after the last
// sample read.
func ReadSamples(b []byte, t *InitTrack, next uint64) ([]Sample, uint64, error) {
	nexts := []uint64{next}
	out, err := readSegment(b, []*InitTrack{t}, nexts)
	if err != nil {
		return nil, next, err
	}
	return out, nexts[0], nil
}

// Reader reads the media segments of several tracks of one init segment, in file order:
// fragment by fragment, and within one, track fragment by track fragment.
type Reader struct {
	tracks []*InitTrack
	next   []uint64 // per track, for fragments without tfdt
}

// NewReader returns a Reader of tracks.
func NewReader(tracks []InitTrack) *Reader {
	r := &Reader{next: make([]uint64, len(tracks))}
	for i := range tracks {
		r.tracks = append(r.tracks, &tracks[i])
	}
	return r
}

// Segment reads the samples of the reader's tracks from one media segment, as ReadSamples
// does for one track; Sample.Track is the track's index. On an error it returns no sample.
func (r *Reader) Segment(b []byte) ([]Sample, error) {
	next := append([]uint64(nil), r.next...)
	out, err := readSegment(b, r.tracks, next)
	if err != nil {
		return nil, err
	}
	r.next = next
	return out, nil
}

// readSegment reads the samples of tracks from b; next holds each track's decode time for a
// fragment without tfdt, and is moved past the samples read.
func readSegment(b []byte, tracks []*InitTrack, next []uint64) ([]Sample, error) {
	var out []Sample
	for off := 0; off < len(b); {
		bx, err := NextBox(b, off)
		if err != nil {
			return nil, err
		}
		off = bx.End
		if bx.Type != "moof" {
			continue
		}
		v, err := decodeBox(b, bx)
		if err != nil {
			return nil, err
		}
		moof, ok := v.(*mp4.MoofBox)
		if !ok {
			return nil, fmt.Errorf("%w: moof decodes as %T", ErrInvalid, v)
		}
		for _, traf := range moof.Trafs {
			if traf == nil || traf.Tfhd == nil {
				continue
			}
			for i, t := range tracks {
				if traf.Tfhd.TrackID != t.ID {
					continue
				}
				if out, next[i], err = trafSamples(b, bx, traf, t, i, next[i], out); err != nil {
					return nil, err
				}
				break
			}
		}
	}
	return out, nil
}

// trafSamples appends the samples of one track fragment.
func trafSamples(b []byte, moof Box, traf *mp4.TrafBox, t *InitTrack, idx int, next uint64, out []Sample) ([]Sample, uint64, error) {
	tfhd := traf.Tfhd
	dts := next
	if traf.Tfdt != nil {
		dts = traf.Tfdt.BaseMediaDecodeTime()
	}
	// The data of the first run starts at the base offset: the tfhd's, or the moof's start
	// (default-base-is-moof, and the usual reading when neither is set); later runs without
	// an offset follow the previous run.
	base := uint64(moof.Start)
	if tfhd.HasBaseDataOffset() {
		base = tfhd.BaseDataOffset
	}
	pos := base
	for i, trun := range traf.Truns {
		if trun == nil {
			continue
		}
		if trun.HasDataOffset() {
			p := int64(base) + int64(trun.DataOffset)
			if p < 0 {
				return nil, next, fmt.Errorf("%w: trun data offset %d before the segment", ErrInvalid, p)
			}
			pos = uint64(p)
		} else if i == 0 {
			pos = base
		}
		for _, s := range trun.Samples {
			if len(out) >= MaxSamples {
				return nil, next, fmt.Errorf("%w: over %d samples in a segment", ErrInvalid, MaxSamples)
			}
			d, size := s.Dur, s.Size
			if !trun.HasSampleDuration() {
				d = t.defaultDuration
				if tfhd.HasDefaultSampleDuration() {
					d = tfhd.DefaultSampleDuration
				}
			}
			if !trun.HasSampleSize() {
				size = t.defaultSize
				if tfhd.HasDefaultSampleSize() {
					size = tfhd.DefaultSampleSize
				}
			}
			var cto int64
			if trun.HasSampleCompositionTimeOffset() {
				cto = int64(s.CompositionTimeOffset)
				if trun.Version == 0 {
					cto = int64(uint32(s.CompositionTimeOffset))
				}
			}
			end := pos + uint64(size)
			if end > uint64(len(b)) || end < pos {
				return nil, next, fmt.Errorf("%w: sample of %d bytes at %d beyond the segment's %d", ErrInvalid, size, pos, len(b))
			}
			out = append(out, Sample{Track: idx, DTS: dts, CTO: cto, Dur: d, Data: b[pos:end:end]})
			pos = end
			dts += uint64(d)
		}
	}
	return out, dts, nil
}

// SplitNALUnits splits a video sample of 4-byte length-prefixed NAL units (the only length
// size mp4ff reads in avcC and hvcC). Empty units are skipped.
func SplitNALUnits(b []byte) ([][]byte, error) {
	var out [][]byte
	for len(b) > 0 {
		if len(b) < 4 {
			return nil, fmt.Errorf("%w: %d trailing bytes in a sample", ErrInvalid, len(b))
		}
		n := uint64(binary.BigEndian.Uint32(b))
		b = b[4:]
		if n > uint64(len(b)) {
			return nil, fmt.Errorf("%w: NAL unit of %d bytes in %d", ErrInvalid, n, len(b))
		}
		if n > 0 {
			if len(out) >= MaxNALUnits {
				return nil, fmt.Errorf("%w: over %d NAL units in a sample", ErrInvalid, MaxNALUnits)
			}
			out = append(out, b[:n:n])
		}
		b = b[n:]
	}
	return out, nil
}
