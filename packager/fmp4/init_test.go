package fmp4

import (
	"encoding/hex"
	"errors"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
)

func TestInitSegment(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tracks []media.Track
		check  func(t *testing.T, f fileView)
	}{
		{"h264+aac", []media.Track{mediatest.H264(0), mediatest.AAC(1)}, func(t *testing.T, f fileView) {
			stsd := f.stsd(0)
			if stsd.AvcX == nil || stsd.AvcX.Type() != "avc1" || stsd.AvcX.AvcC == nil {
				t.Fatalf("no avc1/avcC")
			}
			if stsd.AvcX.Width != 320 || stsd.AvcX.Height != 240 {
				t.Errorf("size %dx%d", stsd.AvcX.Width, stsd.AvcX.Height)
			}
			a := f.stsd(1)
			if a.Mp4a == nil || a.Mp4a.Esds == nil || a.Mp4a.Esds.DecConfigDescriptor.ObjectType != 0x40 {
				t.Fatalf("no mp4a/esds 0x40")
			}
			if got := a.Mp4a.Esds.DecConfigDescriptor.DecSpecificInfo.DecConfig; string(got) != string(mediatest.AACConfig) {
				t.Errorf("ASC %x", got)
			}
		}},
		{"h265", []media.Track{mediatest.H265(0)}, func(t *testing.T, f fileView) {
			stsd := f.stsd(0)
			if stsd.HvcX == nil || stsd.HvcX.Type() != "hvc1" || stsd.HvcX.HvcC == nil {
				t.Fatalf("no hvc1/hvcC")
			}
			if stsd.HvcX.Width != 320 || stsd.HvcX.Height != 240 {
				t.Errorf("size %dx%d", stsd.HvcX.Width, stsd.HvcX.Height)
			}
		}},
		{"mp3", []media.Track{mediatest.MP3(0)}, func(t *testing.T, f fileView) {
			a := f.stsd(0)
			if a.Mp4a == nil || a.Mp4a.Esds.DecConfigDescriptor.ObjectType != 0x6b {
				t.Fatalf("no mp4a with OTI 0x6B")
			}
			if a.Mp4a.SampleRate != 44100 {
				t.Errorf("rate %d", a.Mp4a.SampleRate)
			}
		}},
		{"opus 6ch", []media.Track{func() media.Track { o := mediatest.Opus(0); o.Params.Channels = 6; return o }()}, func(t *testing.T, f fileView) {
			a := f.stsd(0)
			if a.Opus == nil || a.Opus.Dops == nil {
				t.Fatalf("no Opus/dOps")
			}
			if d := a.Opus.Dops; d.OutputChannelCount != 6 || d.ChannelMappingFamily != 1 || d.StreamCount != 4 || len(d.ChannelMapping) != 6 {
				t.Errorf("dOps %+v", d)
			}
		}},
		{"second track only", []media.Track{mediatest.AAC(1)}, func(t *testing.T, f fileView) {
			if id := f.Moov.Traks[0].Tkhd.TrackID; id != 2 {
				t.Errorf("track ID %d, want 2", id)
			}
			if f.Moov.Mvex.Trex.TrackID != 2 {
				t.Errorf("trex ID %d", f.Moov.Mvex.Trex.TrackID)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := InitSegment(tc.tracks)
			if err != nil {
				t.Fatal(err)
			}
			f := fileView{decode(t, b)}
			if f.Init == nil || len(f.Moov.Traks) != len(tc.tracks) {
				t.Fatalf("not an init segment with %d traks", len(tc.tracks))
			}
			for i, trk := range tc.tracks {
				if ts := f.Moov.Traks[i].Mdia.Mdhd.Timescale; ts != uint32(trk.ClockRate) {
					t.Errorf("track %d timescale %d", i, ts)
				}
			}
			tc.check(t, f)
		})
	}
}

func TestInitSegmentErrors(t *testing.T) {
	bad := mediatest.H264(0)
	bad.Params.SPS = nil
	if _, err := InitSegment([]media.Track{bad}); !errors.Is(err, ErrMissingParams) {
		t.Errorf("no SPS: %v", err)
	}
	garbage := mediatest.H265(0)
	garbage.Params.SPS = []byte{0x42, 0x01, 0xff}
	if _, err := InitSegment([]media.Track{garbage}); err == nil {
		t.Errorf("garbage SPS accepted")
	}
	if _, err := InitSegment([]media.Track{{Codec: media.CodecUnknown, ClockRate: 1000}}); !errors.Is(err, ErrUnsupportedCodec) || !errors.Is(err, media.ErrUnsupportedCodec) {
		t.Errorf("unknown codec: %v", err)
	}
	if _, err := InitSegment(nil); err == nil {
		t.Errorf("no tracks accepted")
	}
}

func TestCodecString(t *testing.T) {
	heaac := mediatest.AAC(0)
	heaac.Params.AudioConfig = []byte{0x2b, 0x11, 0x88, 0x00} // AOT 5 (SBR)
	lsf := mediatest.MP3(0)
	lsf.ClockRate = 22050
	for _, tc := range []struct {
		trk  media.Track
		want string
	}{
		{mediatest.H264(0), "avc1.64000D"},
		{mediatest.H265(0), "hvc1.1.6.L60.90"},
		{mediatest.AAC(0), "mp4a.40.2"},
		{heaac, "mp4a.40.5"},
		{mediatest.MP3(0), "mp4a.6B"},
		{lsf, "mp4a.69"},
		{mediatest.Opus(0), "opus"},
	} {
		got, err := CodecString(tc.trk)
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.trk.Codec, got, err, tc.want)
		}
	}
	if _, err := CodecString(media.Track{Codec: media.CodecAAC}); err == nil {
		t.Error("AAC without config accepted")
	}
}

// TestInitHighProfiles: H.264 of the profiles with chroma and bit-depth fields in their SPS
// (High 4:2:2, High 4:4:4 Predictive, High 10; libx264 picks them for 4:2:2, 4:4:4 and 10-bit
// input) makes a live and a file init segment whose avcC carries those fields, and which reads
// back whole: the file's durations can be found. The parameter sets are libx264's for 320x240.
func TestInitHighProfiles(t *testing.T) {
	for _, c := range []struct {
		name, sps, pps string
		chroma, depth  byte
	}{
		{"High 4:4:4", "67f4000d919b28283f6022000003000200000300641e28532c", "68ebe3c44844", 3, 8},
		{"High 4:2:2", "677a000dbcd94141fb011000000300100000030320f1429960", "68ebe3cb22c0", 2, 8},
		{"High 10", "676e000da6cd94141fb011000003000100000300320f142996", "68ebe3cb22c0", 1, 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := mediatest.H264(0)
			tr.Params.SPS, tr.Params.PPS = unhex(t, c.sps), unhex(t, c.pps)
			live, err := InitSegment([]media.Track{tr, mediatest.AAC(1)})
			if err != nil {
				t.Fatal(err)
			}
			fi, err := FileInitSegment([]media.Track{tr, mediatest.AAC(1)})
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range [][]byte{live, fi.Data} {
				f := fileView{decode(t, b)}
				if len(f.Moov.Traks) != 2 {
					t.Fatalf("%d traks, want 2", len(f.Moov.Traks))
				}
				avcC := f.Moov.Traks[0].Mdia.Minf.Stbl.Stsd.AvcX.AvcC
				if avcC.ChromaFormat != c.chroma || avcC.BitDepthLumaMinus1+8 != c.depth || len(avcC.SPSnalus) != 1 {
					t.Fatalf("avcC %+v: want chroma format %d, depth %d", avcC.DecConfRec, c.chroma, c.depth)
				}
			}
		})
	}
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
