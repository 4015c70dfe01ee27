package media

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

func TestRescale(t *testing.T) {
	const hours100 = 100 * 3600 * 90000 // 100 h at 90 kHz
	tests := []struct {
		name     string
		ts       int64
		from, to int
		want     int64
	}{
		{"same rate", 12345, 90000, 90000, 12345},
		{"zero from", 12345, 0, 1000, 12345},
		{"negative to", 12345, 90000, -1, 12345},
		{"zero", 0, 90000, 1000, 0},
		{"exact down", 90, 90000, 1000, 1},
		{"half rounds up", 45, 90000, 1000, 1},
		{"below half rounds down", 44, 90000, 1000, 0},
		{"negative below half", -44, 90000, 1000, 0},
		{"negative half rounds away", -45, 90000, 1000, -1},
		{"negative near -1", -89, 90000, 1000, -1},
		{"negative exact", -90, 90000, 1000, -1},
		{"negative one and a half", -135, 90000, 1000, -2},
		{"up", 1, 1000, 90000, 90},
		{"negative up", -1, 1000, 90000, -90},
		{"aac frame to video clock", 1024, 48000, 90000, 1920},
		{"negative aac frame", -1024, 48000, 90000, -1920},
		{"44.1 kHz rounds", 1024, 44100, 90000, 2090},
		{"negative 44.1 kHz rounds", -1024, 44100, 90000, -2090},
		{"100 hours", hours100, 90000, 1000, 360_000_000},
		{"100 hours to 48 kHz", hours100, 90000, 48000, 17_280_000_000},
		{"minus 100 hours to 44.1 kHz", -hours100 - 1, 90000, 44100, -15_876_000_000},
		{"max int64 down", math.MaxInt64, 90000, 1000, 102481911520608620},
		{"min int64 down", math.MinInt64, 90000, 1000, -102481911520608620},
		{"2^62 to 48 kHz", 1 << 62, 90000, 48000, 2459565876494606882},
		{"-2^62 to 48 kHz", -(1 << 62), 90000, 48000, -2459565876494606882},
		{"max int64 nearly same rate", math.MaxInt64, 90000, 89999, 9223269554943255198},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Rescale(tt.ts, tt.from, tt.to); got != tt.want {
				t.Errorf("Rescale(%d, %d, %d) = %d, want %d", tt.ts, tt.from, tt.to, got, tt.want)
			}
		})
	}
}

// TestRescaleMatchesExact compares Rescale with exact rational arithmetic on random values,
// and checks that it is odd (symmetric around zero) and monotonic.
func TestRescaleMatchesExact(t *testing.T) {
	rates := []int{1000, 8000, 44100, 48000, 90000, 96000, 1 << 20}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		from, to := rates[rng.IntN(len(rates))], rates[rng.IntN(len(rates))]
		// Keep |result| within int64: scale the bound down when going to a faster clock.
		bound := int64(math.MaxInt64 / 2)
		if to > from {
			bound = bound / int64(to) * int64(from)
		}
		ts := rng.Int64N(bound)
		if rng.IntN(2) == 0 {
			ts = rng.Int64N(1 << 40) // realistic magnitudes, days at 90 kHz
		}
		if rng.IntN(2) == 0 {
			ts = -ts
		}
		want := exactRescale(ts, from, to)
		if got := Rescale(ts, from, to); got != want {
			t.Fatalf("Rescale(%d, %d, %d) = %d, want %d", ts, from, to, got, want)
		}
		if got, neg := Rescale(ts, from, to), Rescale(-ts, from, to); got != -neg {
			t.Fatalf("Rescale(%d) = %d but Rescale(%d) = %d", ts, got, -ts, neg)
		}
		if a, b := Rescale(ts, from, to), Rescale(ts+1, from, to); b < a {
			t.Fatalf("not monotonic at %d (%d→%d): %d then %d", ts, from, to, a, b)
		}
	}
}

// exactRescale rounds ts*to/from to nearest, halves away from zero, with big integers.
func exactRescale(ts int64, from, to int) int64 {
	num := new(big.Int).Mul(big.NewInt(ts), big.NewInt(int64(to)))
	neg := num.Sign() < 0
	num.Abs(num)
	f := big.NewInt(int64(from))
	// (2·|num| + from) / (2·from) is |num|/from rounded half up.
	num.Mul(num, big.NewInt(2)).Add(num, f)
	q := num.Quo(num, f.Mul(f, big.NewInt(2)))
	if neg {
		q.Neg(q)
	}
	return q.Int64()
}

func TestAccessUnitSize(t *testing.T) {
	au := &AccessUnit{Payload: [][]byte{make([]byte, 3), nil, make([]byte, 5)}}
	if got := au.Size(); got != 8 {
		t.Errorf("Size() = %d, want 8", got)
	}
}

// TestSameTracks: SameFormat looks at codecs, clocks and audio formats only; SameTracks also at
// IDs and decoder parameters; both need the same number of tracks.
func TestSameTracks(t *testing.T) {
	base := func() []Track {
		return []Track{
			{ID: 0, Codec: CodecH264, ClockRate: 90000, Params: Params{SPS: []byte{1, 2}, PPS: []byte{3}, Width: 640, Height: 360}},
			{ID: 1, Codec: CodecAAC, ClockRate: 48000, Params: Params{AudioConfig: []byte{0x11, 0x90}, SampleRate: 48000, Channels: 2}},
		}
	}
	for _, c := range []struct {
		name               string
		change             func([]Track) []Track
		sameFormat, sameTr bool
	}{
		{"identical", func(t []Track) []Track { return t }, true, true},
		{"new SPS", func(t []Track) []Track { t[0].Params.SPS = []byte{1, 3}; return t }, true, false},
		{"new picture size", func(t []Track) []Track { t[0].Params.Width = 1280; return t }, true, false},
		{"new IDs", func(t []Track) []Track { t[0].ID, t[1].ID = 1, 0; return t }, true, false},
		{"new codec", func(t []Track) []Track { t[0].Codec = CodecH265; return t }, false, false},
		{"new clock", func(t []Track) []Track { t[1].ClockRate = 44100; return t }, false, false},
		{"new audio config", func(t []Track) []Track { t[1].Params.AudioConfig = []byte{0x12, 0x10}; return t }, false, false},
		{"new channels", func(t []Track) []Track { t[1].Params.Channels = 1; return t }, false, false},
		{"new sample rate", func(t []Track) []Track { t[1].Params.SampleRate = 44100; return t }, false, false},
		{"one track less", func(t []Track) []Track { return t[:1] }, false, false},
	} {
		a, b := base(), c.change(base())
		if got := SameFormat(a, b); got != c.sameFormat {
			t.Errorf("%s: SameFormat %v, want %v", c.name, got, c.sameFormat)
		}
		if got := SameTracks(a, b); got != c.sameTr {
			t.Errorf("%s: SameTracks %v, want %v", c.name, got, c.sameTr)
		}
	}
}
