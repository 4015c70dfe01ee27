package fmp4

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/Eyevinn/mp4ff/bits"
	"github.com/Eyevinn/mp4ff/mp4"
)

// Fragment is one written media fragment: a CMAF segment with a traf per track.
type Fragment struct {
	// Seq is the moof sequence number.
	Seq uint32
	// Data is styp + moof + mdat, with the tracks' samples one track after the other.
	Data []byte
	// Tracks describes each track's part, in track order; a track without samples in this
	// fragment is absent.
	Tracks []TrackFragment
}

// TrackFragment is one track's part of a Fragment. Header followed by Data[Start:End] is a
// single-track fragment of that track alone, as DASH serves it, sharing the sample bytes.
type TrackFragment struct {
	// Track is the media track ID.
	Track int
	// BaseTime is the tfdt: the DTS of the first sample (plus the shift) in the track's clock.
	BaseTime int64
	// Duration is the sum of the sample durations in the track's clock.
	Duration int64
	// Samples counts the samples.
	Samples int
	// Key tells whether the first sample is a sync sample.
	Key bool
	// Header is styp + a moof with this track only + the mdat header.
	Header []byte
	// Start and End locate the track's sample bytes in the Fragment's Data.
	Start, End int
}

// Size returns the size in bytes of the single-track fragment.
func (tf *TrackFragment) Size() int { return len(tf.Header) + tf.End - tf.Start }

// styp marks a media segment (ISO/IEC 23009-1 6.3.4.2: brand msdh).
var styp = func() []byte {
	b := mp4.NewStyp("msdh", 0, []string{"msdh"})
	sw := bits.NewFixedSliceWriter(int(b.Size()))
	if err := b.EncodeSW(sw); err != nil {
		panic(err) // fixed input
	}
	return sw.Bytes()
}()

const mdatHeaderSize = 8

// StypSize is the size of the styp box that starts a fragment's Data and every
// TrackFragment's Header.
func StypSize() int { return len(styp) }

// encode writes the open fragment after dst (a new buffer when dst is nil), with the styp box
// first when withStyp is set. Box objects are made per fragment (a few dozen small
// allocations per segment); sample tables and bytes are the reusable buffers. The offsets of
// the returned Tracks count from the start of dst.
func (f *Fragmenter) encode(dst []byte, seq uint32, withStyp bool) (*Fragment, error) {
	if len(dst)+len(styp)+f.bytes+64*1024+16*f.n > math.MaxUint32 {
		return nil, fmt.Errorf("fmp4: fragment of %d bytes too large", f.bytes)
	}
	mfhd := mp4.CreateMfhd(seq)
	moof := &mp4.MoofBox{}
	_ = moof.AddChild(mfhd)
	frag := &Fragment{Seq: seq}
	var truns []*mp4.TrunBox
	var bufs []*trackBuf
	for i := range f.tracks {
		t := &f.tracks[i]
		if len(t.samples) == 0 {
			continue
		}
		traf := &mp4.TrafBox{}
		_ = traf.AddChild(mp4.CreateTfhd(TrackID(t.track)))
		_ = traf.AddChild(mp4.CreateTfdt(uint64(t.base)))
		trun := mp4.CreateTrun(0)
		if !t.video {
			// Audio samples are all sync samples without composition offsets.
			trun.Version = 0
			trun.Flags = mp4.TrunDataOffsetPresentFlag | mp4.TrunSampleDurationPresentFlag | mp4.TrunSampleSizePresentFlag
		}
		trun.Samples = t.samples
		_ = traf.AddChild(trun)
		_ = moof.AddChild(traf)
		truns = append(truns, trun)
		bufs = append(bufs, t)
		var dur int64
		for _, s := range t.samples {
			dur += int64(s.Dur)
		}
		frag.Tracks = append(frag.Tracks, TrackFragment{
			Track: i, BaseTime: t.base, Duration: dur, Samples: len(t.samples),
			Key: mp4.IsSyncSampleFlags(t.samples[0].Flags),
		})
	}

	moofSize := int(moof.Size())
	off := moofSize + mdatHeaderSize // data offsets count from the moof's first byte
	for i, trun := range truns {
		trun.DataOffset = int32(off)
		off += len(bufs[i].data)
	}
	lead := 0
	if withStyp {
		lead = len(styp)
	}
	need := lead + moofSize + mdatHeaderSize + f.bytes
	var data []byte
	if dst == nil {
		data = make([]byte, need)
	} else {
		data = slices.Grow(dst, need)[:len(dst)+need]
	}
	n := len(dst)
	n += copy(data[n:], styp[:lead])
	if err := encodeBox(moof, data[n:n+moofSize]); err != nil {
		return nil, fmt.Errorf("fmp4: encode moof %d: %w", seq, err)
	}
	n += moofSize
	putMdatHeader(data[n:], f.bytes)
	n += mdatHeaderSize
	for i, t := range bufs {
		frag.Tracks[i].Start = n
		n += copy(data[n:], t.data)
		frag.Tracks[i].End = n
	}
	frag.Data = data

	for i, trun := range truns {
		one := &mp4.MoofBox{}
		_ = one.AddChild(mfhd)
		_ = one.AddChild(moof.Trafs[i])
		size := int(one.Size())
		trun.DataOffset = int32(size + mdatHeaderSize)
		hdr := make([]byte, len(styp)+size+mdatHeaderSize)
		h := copy(hdr, styp)
		if err := encodeBox(one, hdr[h:h+size]); err != nil {
			return nil, fmt.Errorf("fmp4: encode moof %d of track %d: %w", seq, bufs[i].track.ID, err)
		}
		putMdatHeader(hdr[h+size:], len(bufs[i].data))
		frag.Tracks[i].Header = hdr
	}
	return frag, nil
}

// encodeBox writes b into dst, which has exactly b's size.
func encodeBox(b *mp4.MoofBox, dst []byte) error {
	sw := bits.NewFixedSliceWriterFromSlice(dst)
	if err := b.EncodeSW(sw); err != nil {
		return err
	}
	if sw.Len() != len(dst) {
		return fmt.Errorf("wrote %d bytes of %d", sw.Len(), len(dst))
	}
	return nil
}

// putMdatHeader writes the header of an mdat box holding n payload bytes.
func putMdatHeader(dst []byte, n int) {
	binary.BigEndian.PutUint32(dst, uint32(mdatHeaderSize+n))
	copy(dst[4:8], "mdat")
}
