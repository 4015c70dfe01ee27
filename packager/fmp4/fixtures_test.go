package fmp4

import (
	"bytes"
	"testing"

	"github.com/Eyevinn/mp4ff/mp4"

	"github.com/sluicemedia/sluice/internal/media"
)

// videoAU returns a frame: the parameter sets (on key frames), an SEI and one slice.
func videoAU(trk media.Track, dts, pts int64, key bool, size int) *media.AccessUnit {
	au := &media.AccessUnit{Track: trk.ID, DTS: dts, PTS: pts, Key: key}
	slice := bytes.Repeat([]byte{0xab}, size)
	sei := []byte{6, 5, 1, 0x80}
	if trk.Codec == media.CodecH265 {
		sei = []byte{39 << 1, 1, 5, 1, 0x80}
		slice[0], slice[1] = 1<<1, 1
		if key {
			slice[0] = 19 << 1
			au.Payload = append(au.Payload, []byte{35 << 1, 1, 0x50}, trk.Params.VPS, trk.Params.SPS, trk.Params.PPS)
		}
	} else {
		slice[0] = 1
		if key {
			slice[0] = 5
			au.Payload = append(au.Payload, []byte{9, 0xf0}, trk.Params.SPS, trk.Params.PPS)
		}
	}
	au.Payload = append(au.Payload, sei, slice)
	return au
}

func audioAU(trk media.Track, ts int64, size int) *media.AccessUnit {
	return &media.AccessUnit{Track: trk.ID, DTS: ts, PTS: ts, Key: true, Payload: [][]byte{bytes.Repeat([]byte{0x21}, size)}}
}

// decode parses a file (init or fragments) with mp4ff.
func decode(t *testing.T, b []byte) *mp4.File {
	t.Helper()
	f, err := mp4.DecodeFile(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("mp4ff decode: %v", err)
	}
	return f
}

// fileView adds helpers to a decoded file.
type fileView struct{ *mp4.File }

func (f fileView) stsd(i int) *mp4.StsdBox { return f.Moov.Traks[i].Mdia.Minf.Stbl.Stsd }
