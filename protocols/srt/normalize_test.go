package srt

import (
	"encoding/binary"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
)

var fixTracks = []media.Track{
	{ID: 0, Codec: media.CodecH264, ClockRate: 90000},
	{ID: 1, Codec: media.CodecAAC, ClockRate: 48000},
}

func TestDTSFixer(t *testing.T) {
	type unit struct {
		track        int
		pts, dts     int64
		wantP, wantD int64
	}
	cases := []struct {
		name  string
		units []unit
	}{
		{"in order", []unit{{0, 3600, 0, 3600, 0}, {0, 7200, 3600, 7200, 3600}, {1, 0, 0, 0, 0}}},
		{"repeated DTS nudged", []unit{{0, 3600, 3600, 3600, 3600}, {0, 3600, 3600, 3601, 3601}}},
		{"small step back nudged", []unit{{0, 9000, 9000, 9000, 9000}, {0, 12000, 8000, 12000, 9001}}},
		{"PTS kept at or after DTS", []unit{{0, 9000, 9000, 9000, 9000}, {0, 8000, 8000, 9001, 9001}}},
		{"clock reset rebases every track", []unit{
			{0, 900000, 900000, 900000, 900000},
			{1, 480000, 480000, 480000, 480000},
			{0, 0, 0, 903600, 903600},       // 10 s + 40 ms
			{1, 0, 0, 481920, 481920},       // the same offset at 48 kHz
			{0, 7200, 3600, 910800, 907200}, // B-frame offset kept
		}},
		{"unknown track untouched", []unit{{5, 1, 2, 1, 2}}},
	}
	for _, c := range cases {
		f := newDTSFixer(fixTracks)
		for i, u := range c.units {
			au := &media.AccessUnit{Track: u.track, PTS: u.pts, DTS: u.dts}
			f.fix(au)
			if au.PTS != u.wantP || au.DTS != u.wantD {
				t.Errorf("%s: unit %d: PTS/DTS %d/%d, want %d/%d", c.name, i, au.PTS, au.DTS, u.wantP, u.wantD)
			}
		}
	}
}

func TestTimeline(t *testing.T) {
	var tl timeline
	p, d := tl.shift(&media.AccessUnit{PTS: 1000, DTS: 1000}, 90000)
	if p != 1000 || d != 1000 {
		t.Fatalf("first unit shifted to %d/%d", p, d)
	}
	tl.shift(&media.AccessUnit{PTS: 90000, DTS: 90000}, 90000)
	// A new session restarts its clock: output continues 40 ms later, on every track.
	p, d = tl.shift(&media.AccessUnit{PTS: 3600, DTS: 0, Discontinuity: true}, 90000)
	if d != 93600 || p != 97200 {
		t.Fatalf("after a discontinuity: %d/%d, want 97200/93600", p, d)
	}
	if _, d = tl.shift(&media.AccessUnit{PTS: 0, DTS: 0, Track: 1}, 48000); d != 49920 {
		t.Fatalf("audio after a discontinuity: DTS %d, want 49920", d)
	}
}

// FuzzDTSFixer: whatever timestamps a publisher sends, DTS comes out increasing per track and
// PTS never before DTS.
func FuzzDTSFixer(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 0, 0, 0, 0, 0, 2})
	f.Add(binary.BigEndian.AppendUint64([]byte{1}, 1<<40))
	f.Fuzz(func(t *testing.T, b []byte) {
		fx := newDTSFixer(fixTracks)
		last := map[int]int64{}
		for len(b) >= 9 {
			track := int(b[0] % 3)
			dts := int64(binary.BigEndian.Uint32(b[1:])) - 1<<31
			pts := dts + int64(int32(binary.BigEndian.Uint32(b[5:])))%90000
			b = b[9:]
			au := &media.AccessUnit{Track: track, PTS: pts, DTS: dts}
			fx.fix(au)
			if track > 1 {
				continue
			}
			if prev, ok := last[track]; ok && au.DTS <= prev {
				t.Fatalf("track %d: DTS %d after %d", track, au.DTS, prev)
			}
			if au.PTS < au.DTS {
				t.Fatalf("PTS %d before DTS %d", au.PTS, au.DTS)
			}
			last[track] = au.DTS
		}
	})
}
