package ingest

import (
	"context"
	"encoding/hex"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
	"github.com/sluicemedia/sluice/packager/mpegts"
)

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// avTracks are H.264 320x240 and AAC LC 48 kHz stereo.
func avTracks() []media.Track { return []media.Track{mediatest.H264(0), mediatest.AAC(1)} }

// filled returns n bytes that start with head and hold no start code.
func filled(n int, head byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 0xaa
	}
	b[0] = head
	return b
}

// synthAV returns the units of avTracks, interleaved by DTS, from start (90 kHz) for the given
// seconds: 25 fps video with a key frame a second, the first with its parameter sets, and
// 1024-sample AAC frames.
func synthAV(start int64, seconds int) []*media.AccessUnit {
	var out []*media.AccessUnit
	a0 := media.Rescale(start, 90000, 48000)
	v, a := 0, 0
	for {
		vd := start + int64(v)*3600
		ad := a0 + int64(a)*1024
		if vd >= start+int64(seconds)*90000 {
			return out
		}
		if media.Rescale(ad, 48000, 90000) < vd {
			out = append(out, &media.AccessUnit{Track: 1, PTS: ad, DTS: ad, Key: true,
				Payload: [][]byte{filled(300, 0x21)}})
			a++
			continue
		}
		au := &media.AccessUnit{Track: 0, PTS: vd, DTS: vd, Key: v%25 == 0}
		if au.Key {
			au.Payload = [][]byte{mediatest.H264SPS, mediatest.H264PPS, filled(2000, 0x65)}
		} else {
			au.Payload = [][]byte{filled(500, 0x41)}
		}
		out = append(out, au)
		v++
	}
}

// muxTS writes units as MPEG-TS with packager/mpegts's Muxer.
func muxTS(tb testing.TB, tracks []media.Track, aus []*media.AccessUnit) []byte {
	tb.Helper()
	mux, err := mpegts.NewMuxer(nil, tracks)
	if err != nil {
		tb.Fatal(err)
	}
	var out []byte
	for _, au := range aus {
		if out, err = mux.AppendAccessUnit(out, au); err != nil {
			tb.Fatal(err)
		}
	}
	return out
}

// readAll closes s and returns what r received.
func readAll(s *stream.Stream, r *stream.Reader) []*media.AccessUnit {
	s.Close()
	var aus []*media.AccessUnit
	for {
		au, err := r.Read(context.Background())
		if err != nil {
			return aus
		}
		aus = append(aus, au)
	}
}

// newStream returns a stream and a reader of everything published into it.
func newStream(t *testing.T) (*stream.Stream, *stream.Reader) {
	t.Helper()
	s := stream.New(t.Name(), stream.Options{Log: discard})
	r, err := s.NewReader("test")
	if err != nil {
		t.Fatal(err)
	}
	return s, r
}

// checkMonotonic fails when a track's DTS does not increase within a session, or PTS < DTS.
func checkMonotonic(t *testing.T, aus []*media.AccessUnit) {
	t.Helper()
	last := map[int]int64{}
	for i, au := range aus {
		if au.Discontinuity {
			clear(last)
		}
		if l, ok := last[au.Track]; ok && au.DTS <= l {
			t.Fatalf("unit %d, track %d: DTS %d after %d", i, au.Track, au.DTS, l)
		}
		if au.PTS < au.DTS {
			t.Fatalf("unit %d: PTS %d before DTS %d", i, au.PTS, au.DTS)
		}
		last[au.Track] = au.DTS
	}
}
