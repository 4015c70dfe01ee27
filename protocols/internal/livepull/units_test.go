package livepull

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
	"github.com/sluicemedia/sluice/packager/fmp4"
)

// lengthPrefixed joins NAL units as an MP4 video sample: each behind its 4-byte length.
func lengthPrefixed(nalus ...[]byte) []byte {
	var b []byte
	for _, n := range nalus {
		b = binary.BigEndian.AppendUint32(b, uint32(len(n)))
		b = append(b, n...)
	}
	return b
}

// TestTrackUnitsAudio: times are rescaled from the mdhd timescale to the track's clock and
// shifted; the payload is the sample; an empty sample is dropped.
func TestTrackUnitsAudio(t *testing.T) {
	tu := NewTrackUnits(&fmp4.InitTrack{Timescale: 1000, Track: mediatest.AAC(0)})
	if !tu.Ready() {
		t.Fatal("an audio track is not ready")
	}
	au, changed := tu.Unit(fmp4.Sample{Track: 2, DTS: 1000, CTO: 10, Data: []byte{1, 2, 3}}, 7)
	if au == nil || changed {
		t.Fatalf("unit %+v, changed %v", au, changed)
	}
	if au.Track != 2 || au.DTS != 48000+7 || au.PTS != 48480+7 || !au.Key || len(au.Payload) != 1 || !bytes.Equal(au.Payload[0], []byte{1, 2, 3}) {
		t.Fatalf("unit %+v, want track 2, DTS 48007, PTS 48487, key, the sample", au)
	}
	if au, _ := tu.Unit(fmp4.Sample{DTS: 2000}, 0); au != nil {
		t.Fatalf("empty sample gave %+v", au)
	}
}

// TestTrackUnitsVideo: NAL units are fixed (AUD dropped, parameter sets before a key frame);
// new parameter sets in the stream change the announced track; unreadable samples and
// samples of nothing but an AUD are dropped.
func TestTrackUnitsVideo(t *testing.T) {
	tr := mediatest.H264(0)
	tu := NewTrackUnits(&fmp4.InitTrack{Timescale: 90000, Track: tr})
	if !tu.Ready() {
		t.Fatal("a video track with its parameter sets is not ready")
	}
	aud, idr := []byte{0x09, 0xf0}, []byte{0x65, 0x88, 0x84}
	au, changed := tu.Unit(fmp4.Sample{DTS: 3600, Data: lengthPrefixed(aud, idr)}, 0)
	if au == nil || changed || !au.Key || au.DTS != 3600 {
		t.Fatalf("key frame: %+v, changed %v", au, changed)
	}
	for _, n := range au.Payload {
		if streamtest.IsAUD(media.CodecH264, n) {
			t.Fatal("AUD kept")
		}
	}
	if !streamtest.HasParams(media.CodecH264, au.Payload) {
		t.Fatalf("key frame without its parameter sets: %x", au.Payload)
	}
	sps := append([]byte(nil), mediatest.H264SPS...)
	sps[len(sps)-1] ^= 0x01 // other parameter sets in the stream
	au, changed = tu.Unit(fmp4.Sample{DTS: 7200, Data: lengthPrefixed(sps, mediatest.H264PPS, idr)}, 0)
	if au == nil || !changed || !bytes.Equal(tu.Track.Params.SPS, sps) {
		t.Fatalf("new SPS: unit %v, changed %v, track SPS %x", au != nil, changed, tu.Track.Params.SPS)
	}
	if au, _ := tu.Unit(fmp4.Sample{Data: []byte{0, 0, 0, 9, 1}}, 0); au != nil {
		t.Fatal("a sample with a NAL unit past its end gave a unit")
	}
	if au, _ := tu.Unit(fmp4.Sample{Data: lengthPrefixed(aud)}, 0); au != nil {
		t.Fatalf("an AUD alone gave %+v", au)
	}
	if tu := NewTrackUnits(&fmp4.InitTrack{Timescale: 90000, Track: media.Track{Codec: media.CodecH264, ClockRate: 90000}}); tu.Ready() {
		t.Fatal("a video track without parameter sets is ready")
	}
}
