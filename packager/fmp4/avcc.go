package fmp4

import (
	"io"

	"github.com/Eyevinn/mp4ff/bits"
	"github.com/Eyevinn/mp4ff/mp4"

	"github.com/sluicemedia/sluice/packager/nal"
)

// avcConfigBox is an avcC box whose body nal.AppendAVCConfig writes. mp4ff's own counts the
// High profiles' extension in its size for every profile but Baseline, Main and Extended, and
// writes it only for 100, 110, 122 and 144: the init of a High 4:4:4 Predictive (244) track
// came out four bytes short of the sizes its boxes state, and no file or player could read
// it. It also stated 4:2:0 and 8 bits whatever the SPS said. The embedded box is mp4ff's, for
// Type and Info, with the fields this body has.
type avcConfigBox struct {
	*mp4.AvcCBox
	body []byte
}

// newAVCConfigBox returns the avcC box of sps and pps, which mp4ff's (for Info) had made.
func newAVCConfigBox(mp4ffs *mp4.AvcCBox, sps, pps []byte) (*avcConfigBox, error) {
	body, err := nal.AppendAVCConfig(nil, sps, pps)
	if err != nil {
		return nil, err
	}
	if len(body) > 7+len(sps)+len(pps)+4 { // the extension: chroma_format and bit depths
		ext := body[len(body)-4:]
		mp4ffs.ChromaFormat, mp4ffs.BitDepthLumaMinus1, mp4ffs.BitDepthChromaMinus1 = ext[0]&3, ext[1]&7, ext[2]&7
		mp4ffs.NoTrailingInfo = false
	}
	return &avcConfigBox{AvcCBox: mp4ffs, body: body}, nil
}

// Size is the box's size, header included.
func (b *avcConfigBox) Size() uint64 { return uint64(8 + len(b.body)) }

// Encode writes the box to w.
func (b *avcConfigBox) Encode(w io.Writer) error {
	sw := bits.NewFixedSliceWriter(int(b.Size()))
	if err := b.EncodeSW(sw); err != nil {
		return err
	}
	_, err := w.Write(sw.Bytes())
	return err
}

// EncodeSW writes the box to sw.
func (b *avcConfigBox) EncodeSW(sw bits.SliceWriter) error {
	if err := mp4.EncodeHeaderSW(b, sw); err != nil {
		return err
	}
	sw.WriteBytes(b.body)
	return sw.AccError()
}

// setAVCConfig puts the avcC of sps and pps in trak's avc1 sample entry (SetAVCDescriptor made
// it) in place of mp4ff's.
func setAVCConfig(trak *mp4.TrakBox, sps, pps []byte) error {
	entry := trak.Mdia.Minf.Stbl.Stsd.AvcX
	if entry == nil || entry.AvcC == nil {
		return ErrMissingParams
	}
	box, err := newAVCConfigBox(entry.AvcC, sps, pps)
	if err != nil {
		return err
	}
	for i, c := range entry.Children {
		if c == mp4.Box(entry.AvcC) {
			entry.Children[i] = box
			return nil
		}
	}
	return ErrMissingParams
}
