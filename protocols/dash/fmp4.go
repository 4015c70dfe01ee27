package dash

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/Eyevinn/mp4ff/mp4"

	"github.com/sluicemedia/sluice/internal/ingest"
	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/nal"
)

// errFMP4 is wrapped by the errors of the fMP4 readers.
var errFMP4 = errors.New("fmp4")

// maxSamples bounds the samples read from one segment.
const maxSamples = 1 << 16

// box is one ISO BMFF box inside a buffer: its type and where its payload lies.
type box struct {
	typ        string
	start, end int // the whole box
	body       int // start of the payload
}

// nextBox reads the box header at off. A size of 0 extends the box to the end of b; a size
// of 1 reads a 64-bit size. The box must lie within b.
func nextBox(b []byte, off int) (box, error) {
	if off+8 > len(b) {
		return box{}, fmt.Errorf("%w: box header at %d beyond %d bytes", errFMP4, off, len(b))
	}
	size := uint64(binary.BigEndian.Uint32(b[off:]))
	bx := box{typ: string(b[off+4 : off+8]), start: off, body: off + 8}
	switch size {
	case 0:
		size = uint64(len(b) - off)
	case 1:
		if off+16 > len(b) {
			return box{}, fmt.Errorf("%w: large box header at %d beyond %d bytes", errFMP4, off, len(b))
		}
		size = binary.BigEndian.Uint64(b[off+8:])
		bx.body = off + 16
	}
	if size < uint64(bx.body-off) || size > uint64(len(b)-off) {
		return box{}, fmt.Errorf("%w: %q box of %d bytes at %d in %d", errFMP4, bx.typ, size, off, len(b))
	}
	bx.end = off + int(size)
	return bx, nil
}

// decodeBox decodes a box with mp4ff, turning a panic of the library into an error: a segment
// from the network must never take the server down.
func decodeBox(b []byte, bx box) (out mp4.Box, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("%w: %q box: %v", errFMP4, bx.typ, r)
		}
	}()
	out, err = mp4.DecodeBox(uint64(bx.start), bytes.NewReader(b[bx.start:bx.end]))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errFMP4, err)
	}
	return out, nil
}

// trackInfo is what the init segment says of the track a representation carries.
type trackInfo struct {
	id        uint32 // track_ID
	timescale uint32 // mdhd
	track     media.Track
	defaults  mp4.TrexBox // trex defaults for the fragments
}

// parseInit reads an init segment (ftyp, moov) and returns its first track of the given kind
// that sluice carries: H.264 (avc1/avc3), H.265 (hvc1/hev1) with their parameter sets, AAC with
// its AudioSpecificConfig, MP3, Opus.
func parseInit(b []byte, kind media.Kind) (*trackInfo, error) {
	for off := 0; off < len(b); {
		bx, err := nextBox(b, off)
		if err != nil {
			return nil, err
		}
		off = bx.end
		if bx.typ != "moov" {
			continue
		}
		v, err := decodeBox(b, bx)
		if err != nil {
			return nil, err
		}
		moov, ok := v.(*mp4.MoovBox)
		if !ok {
			return nil, fmt.Errorf("%w: moov decodes as %T", errFMP4, v)
		}
		return initTrack(moov, kind)
	}
	return nil, fmt.Errorf("%w: init segment without moov", errFMP4)
}

func initTrack(moov *mp4.MoovBox, kind media.Kind) (*trackInfo, error) {
	for _, trak := range moov.Traks {
		if trak == nil || trak.Tkhd == nil || trak.Mdia == nil || trak.Mdia.Mdhd == nil ||
			trak.Mdia.Minf == nil || trak.Mdia.Minf.Stbl == nil || trak.Mdia.Minf.Stbl.Stsd == nil {
			continue
		}
		ti := &trackInfo{id: trak.Tkhd.TrackID, timescale: trak.Mdia.Mdhd.Timescale}
		if ti.timescale == 0 || !describeTrack(trak.Mdia.Minf.Stbl.Stsd, &ti.track) || ti.track.Kind() != kind {
			continue
		}
		if moov.Mvex != nil {
			for _, trex := range moov.Mvex.Trexs {
				if trex != nil && trex.TrackID == ti.id {
					ti.defaults = *trex
				}
			}
		}
		return ti, nil
	}
	return nil, fmt.Errorf("%w: init segment without a supported %s track", errFMP4, kindName(kind))
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
		t.Params = ingest.NewVideoFixer(media.CodecH264, nil, c.SPSnalus[0], c.PPSnalus[0]).Params()
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
		t.Params = ingest.NewVideoFixer(media.CodecH265, vps, sps, pps).Params()
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
		rate, ch, ok := parseASC(dc.DecSpecificInfo.DecConfig)
		if !ok {
			return false
		}
		t.Codec, t.ClockRate = media.CodecAAC, rate
		t.Params = media.Params{AudioConfig: bytes.Clone(dc.DecSpecificInfo.DecConfig), SampleRate: rate, Channels: ch}
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

func kindName(k media.Kind) string {
	if k == media.KindVideo {
		return "video"
	}
	return "audio"
}
