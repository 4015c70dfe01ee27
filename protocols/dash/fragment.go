package dash

import (
	"fmt"

	"github.com/Eyevinn/mp4ff/mp4"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/mpeg4audio"
)

// sample is one sample of a media segment: decode time and composition offset in the track's
// timescale, and its bytes (a slice of the segment).
type sample struct {
	dts  uint64
	cto  int64
	dur  uint32
	data []byte
}

// parseSegment reads the samples of track ti from a media segment: every moof/mdat pair in
// it (styp, sidx, prft, emsg and other boxes are skipped). Decode times start at each
// fragment's tfdt, or continue from the previous fragment (next) when a fragment has none.
// Every offset and size is checked against the segment: a broken segment is an error, never a
// read outside it.
func parseSegment(b []byte, ti *trackInfo, next uint64) ([]sample, uint64, error) {
	var out []sample
	for off := 0; off < len(b); {
		bx, err := nextBox(b, off)
		if err != nil {
			return nil, next, err
		}
		off = bx.end
		if bx.typ != "moof" {
			continue
		}
		v, err := decodeBox(b, bx)
		if err != nil {
			return nil, next, err
		}
		moof, ok := v.(*mp4.MoofBox)
		if !ok {
			return nil, next, fmt.Errorf("%w: moof decodes as %T", errFMP4, v)
		}
		for _, traf := range moof.Trafs {
			if traf == nil || traf.Tfhd == nil || traf.Tfhd.TrackID != ti.id {
				continue
			}
			if out, next, err = trafSamples(b, bx, traf, ti, next, out); err != nil {
				return nil, next, err
			}
		}
	}
	return out, next, nil
}

// trafSamples appends the samples of one track fragment.
func trafSamples(b []byte, moof box, traf *mp4.TrafBox, ti *trackInfo, next uint64, out []sample) ([]sample, uint64, error) {
	tfhd := traf.Tfhd
	dts := next
	if traf.Tfdt != nil {
		dts = traf.Tfdt.BaseMediaDecodeTime()
	}
	// The data of the first run starts at the base offset: the tfhd's, or the moof's start
	// (default-base-is-moof, and the usual reading when neither is set); later runs without
	// an offset follow the previous run.
	base := uint64(moof.start)
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
				return nil, next, fmt.Errorf("%w: trun data offset %d before the segment", errFMP4, p)
			}
			pos = uint64(p)
		} else if i == 0 {
			pos = base
		}
		for _, s := range trun.Samples {
			if len(out) >= maxSamples {
				return nil, next, fmt.Errorf("%w: over %d samples in a segment", errFMP4, maxSamples)
			}
			d, size := s.Dur, s.Size
			if !trun.HasSampleDuration() {
				d = defaultDuration(tfhd, ti)
			}
			if !trun.HasSampleSize() {
				size = defaultSize(tfhd, ti)
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
				return nil, next, fmt.Errorf("%w: sample of %d bytes at %d beyond the segment's %d", errFMP4, size, pos, len(b))
			}
			out = append(out, sample{dts: dts, cto: cto, dur: d, data: b[pos:end:end]})
			pos = end
			dts += uint64(d)
		}
	}
	return out, dts, nil
}

func defaultDuration(tfhd *mp4.TfhdBox, ti *trackInfo) uint32 {
	if tfhd.HasDefaultSampleDuration() {
		return tfhd.DefaultSampleDuration
	}
	return ti.defaults.DefaultSampleDuration
}

func defaultSize(tfhd *mp4.TfhdBox, ti *trackInfo) uint32 {
	if tfhd.HasDefaultSampleSize() {
		return tfhd.DefaultSampleSize
	}
	return ti.defaults.DefaultSampleSize
}

// parseASC returns the sample rate and channel count of an AAC AudioSpecificConfig.
func parseASC(b []byte) (rate, channels int, ok bool) {
	var c mpeg4audio.AudioSpecificConfig
	if err := c.Unmarshal(b); err != nil || c.SampleRate <= 0 {
		return 0, 0, false
	}
	return c.SampleRate, c.ChannelCount, true
}
