package stream

import (
	"slices"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
)

func normTracks() []media.Track {
	return []media.Track{
		{ID: 0, Codec: media.CodecH264, ClockRate: 90000},
		{ID: 1, Codec: media.CodecAAC, ClockRate: 48000},
	}
}

func TestNormalizerDropsBeforeKeyAndUnknownTracks(t *testing.T) {
	var n normalizer
	n.setTracks(normTracks())
	t0 := time.Unix(1000, 0)
	if n.fix(&media.AccessUnit{Track: 0, DTS: 0, PTS: 0, Arrival: t0}) {
		t.Error("video before the first key frame written")
	}
	if n.fix(&media.AccessUnit{Track: 5, Arrival: t0}) {
		t.Error("unit of an unknown track written")
	}
	if !n.fix(&media.AccessUnit{Track: 1, DTS: 0, PTS: 0, Arrival: t0}) {
		t.Error("audio before the first video key frame dropped")
	}
	if !n.fix(&media.AccessUnit{Track: 0, DTS: 3000, PTS: 3000, Key: true, Arrival: t0}) {
		t.Error("key frame dropped")
	}
	au := &media.AccessUnit{Track: 0, DTS: 6000, PTS: 3000, Arrival: t0}
	n.fix(au)
	if au.PTS < au.DTS {
		t.Errorf("PTS %d below DTS %d", au.PTS, au.DTS)
	}
}

// feed writes video units of 25 fps with the given DTS values, arriving 40 ms apart, and
// returns the DTS values written.
func feed(n *normalizer, dts []int64) []int64 {
	t0 := time.Unix(1000, 0)
	var out []int64
	for i, d := range dts {
		au := &media.AccessUnit{Track: 0, DTS: d, PTS: d, Key: i == 0, Arrival: t0.Add(time.Duration(i) * 40 * time.Millisecond)}
		if n.fix(au) {
			out = append(out, au.DTS)
		}
	}
	return out
}

func TestNormalizerTimestamps(t *testing.T) {
	cases := []struct {
		name     string
		hardware bool
		in, want []int64
	}{
		{"clean", false, []int64{0, 3600, 7200, 10800}, []int64{0, 3600, 7200, 10800}},
		{"small step back clamped", false, []int64{0, 3600, 3000, 7200}, []int64{0, 3600, 3601, 7200}},
		{"repeated DTS", false, []int64{0, 3600, 3600, 7200}, []int64{0, 3600, 3601, 7200}},
		{"reset to zero continues", false, []int64{900000, 903600, 0, 3600}, []int64{900000, 903600, 907200, 910800}},
		{"forward jump re-anchored", false, []int64{0, 3600, 9000000, 9003600}, []int64{0, 3600, 7200, 10800}},
		{"hardware: 1 s jump smoothed", true, []int64{0, 3600, 93600, 97200}, []int64{0, 3600, 7200, 10800}},
		{"software: 1 s jump kept", false, []int64{0, 3600, 93600, 97200}, []int64{0, 3600, 93600, 97200}},
		{"0.5 s step back re-anchored", false, []int64{90000, 93600, 48600, 52200}, []int64{90000, 93600, 97200, 100800}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := normalizer{hardware: c.hardware}
			n.setTracks(normTracks())
			got := feed(&n, c.in)
			if !slices.Equal(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestPublisherNormalises(t *testing.T) {
	s := New("n", Options{})
	p, err := s.Publish()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SetTracks(normTracks()); err != nil {
		t.Fatal(err)
	}
	r, err := s.NewReader("r")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	now := time.Now()
	for i, d := range []int64{0, 3600, 3600, 7200, 3600, 7200} {
		if err := p.Write(&media.AccessUnit{Track: 0, DTS: d, PTS: d, Key: i%2 == 0, Arrival: now}); err != nil {
			t.Fatal(err)
		}
	}
	last := int64(-1)
	for range 6 {
		au, err := r.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if au.DTS <= last {
			t.Fatalf("DTS %d after %d", au.DTS, last)
		}
		last = au.DTS
	}
	// 3600 repeated is clamped; 3600 after 7200 is a reset, re-anchored once.
	if p.Repairs() != 2 {
		t.Fatalf("repairs %d, want 2", p.Repairs())
	}
}
