package fmp4

import (
	"bytes"
	"errors"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
)

// TestReadRoundTrip reads back what the writer encodes: the init segment's tracks with their
// parameters, and two fragments' samples in file order with continuous decode times, their
// composition offsets, and video samples that split into the unit's NAL units (parameter sets
// and AUD left out by the writer).
func TestReadRoundTrip(t *testing.T) {
	t.Parallel()
	for _, v := range []media.Track{mediatest.H264(0), mediatest.H265(0)} {
		a := mediatest.AAC(1)
		init, err := InitSegment([]media.Track{v, a})
		if err != nil {
			t.Fatal(err)
		}
		its, err := ReadInit(init)
		if err != nil {
			t.Fatal(err)
		}
		if len(its) != 2 || its[0].ID != 1 || its[1].ID != 2 || its[0].Timescale != 90000 || its[1].Timescale != 48000 {
			t.Fatalf("tracks %+v", its)
		}
		if got := its[0].Track; got.Codec != v.Codec || got.ClockRate != 90000 || !bytes.Equal(got.Params.SPS, v.Params.SPS) ||
			!bytes.Equal(got.Params.PPS, v.Params.PPS) || !bytes.Equal(got.Params.VPS, v.Params.VPS) || got.Params.Width != 320 || got.Params.Height != 240 {
			t.Fatalf("video track %+v", got)
		}
		if got := its[1].Track; got.Codec != media.CodecAAC || got.ClockRate != 48000 || !bytes.Equal(got.Params.AudioConfig, mediatest.AACConfig) ||
			got.Params.SampleRate != 48000 || got.Params.Channels != 2 {
			t.Fatalf("audio track %+v", got)
		}

		f, err := NewFragmenter([]media.Track{v, a})
		if err != nil {
			t.Fatal(err)
		}
		r := NewReader(its)
		next := [2]uint64{}
		counts := [2]int{}
		for seg := range 2 {
			feedGOP(t, f, v, a, int64(seg)*25*3600, 25)
			frag, err := f.Flush(uint32(seg+1), videoAU(v, int64(seg+1)*25*3600, int64(seg+1)*25*3600, true, 10))
			if err != nil {
				t.Fatal(err)
			}
			samples, err := r.Segment(frag.Data)
			if err != nil {
				t.Fatal(err)
			}
			last := -1
			next[1] = uint64(media.Rescale(int64(seg)*25*3600, 90000, 48000)) // feedGOP starts the audio anew
			for i, s := range samples {
				if s.Track < last {
					t.Fatalf("sample %d of track %d after track %d: not in file order", i, s.Track, last)
				}
				last = s.Track
				if s.DTS != next[s.Track] {
					t.Fatalf("segment %d track %d: sample at %d, want %d", seg, s.Track, s.DTS, next[s.Track])
				}
				next[s.Track] += uint64(s.Dur)
				counts[s.Track]++
				if s.Track == 1 {
					if len(s.Data) != 200 || s.CTO != 0 {
						t.Fatalf("audio sample of %d bytes, offset %d", len(s.Data), s.CTO)
					}
					continue
				}
				n := int(s.DTS/3600) % 25
				nalus, err := SplitNALUnits(s.Data)
				if err != nil || len(nalus) != 2 || len(nalus[1]) != 1000+n {
					t.Fatalf("video sample %d: %d NAL units, %v", n, len(nalus), err)
				}
				if want := int64(7200); n%3 != 1 && s.CTO != want {
					t.Fatalf("video sample %d: composition offset %d", n, s.CTO)
				}
			}
		}
		if counts[0] != 50 || next[0] != 50*3600 || counts[1] == 0 {
			t.Fatalf("%v samples, video ends at %d", counts, next[0])
		}

		// One track alone: the same samples, and the time after the last.
		one, end, err := ReadSamples(mustFragment(t, v, a), &its[1], 0)
		if err != nil || len(one) == 0 || end == 0 || one[0].Track != 0 {
			t.Fatalf("%d audio samples, end %d, %v", len(one), end, err)
		}
	}
}

func mustFragment(t testing.TB, v, a media.Track) []byte {
	t.Helper()
	f, err := NewFragmenter([]media.Track{v, a})
	if err != nil {
		t.Fatal(err)
	}
	feedGOP(t, f, v, a, 0, 5)
	frag, err := f.Flush(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	return frag.Data
}

// TestReadRejects refuses broken input with ErrInvalid, never a read outside it.
func TestReadRejects(t *testing.T) {
	t.Parallel()
	v, a := mediatest.H264(0), mediatest.AAC(1)
	init, _ := InitSegment([]media.Track{v, a})
	its, err := ReadInit(init)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range [][]byte{init[:len(init)-3], {0, 0, 0, 8, 'f', 't', 'y', 'p'}} {
		if _, err := ReadInit(b); !errors.Is(err, ErrInvalid) {
			t.Errorf("init of %d bytes: %v", len(b), err)
		}
	}
	seg := mustFragment(t, v, a)
	r := NewReader(its)
	// The mdat cut short: the samples lie beyond the segment.
	if s, err := r.Segment(seg[:len(seg)-10]); !errors.Is(err, ErrInvalid) || s != nil {
		t.Errorf("cut segment: %d samples, %v", len(s), err)
	}
	// A failed segment leaves the reader as it was.
	if s, err := r.Segment(seg); err != nil || s[0].DTS != 0 {
		t.Errorf("after the failure: %v", err)
	}
}

// TestRewriteDecodeTimes moves every track fragment's decode time in place.
func TestRewriteDecodeTimes(t *testing.T) {
	t.Parallel()
	v, a := mediatest.H264(0), mediatest.AAC(1)
	init, _ := InitSegment([]media.Track{v, a})
	its, _ := ReadInit(init)
	f, _ := NewFragmenter([]media.Track{v, a})
	feedGOP(t, f, v, a, 90000, 5)
	frag, err := f.Flush(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint32]uint64{}
	RewriteDecodeTimes(frag.Data, func(track uint32, v uint64) uint64 {
		seen[track] = v
		return v - 1000
	})
	if seen[1] != 90000 || seen[2] != 48000 {
		t.Fatalf("decode times %v", seen)
	}
	samples, err := NewReader(its).Segment(frag.Data)
	if err != nil {
		t.Fatal(err)
	}
	if samples[0].DTS != 89000 {
		t.Fatalf("first sample at %d", samples[0].DTS)
	}
}

// TestNextBox covers the box header forms and refuses boxes that do not fit.
func TestNextBox(t *testing.T) {
	cases := []struct {
		name string
		b    []byte
		ok   bool
		end  int
	}{
		{"plain", []byte{0, 0, 0, 8, 'f', 'r', 'e', 'e'}, true, 8},
		{"to end", []byte{0, 0, 0, 0, 'm', 'd', 'a', 't', 1, 2, 3}, true, 11},
		{"large", []byte{0, 0, 0, 1, 'm', 'd', 'a', 't', 0, 0, 0, 0, 0, 0, 0, 17, 9}, true, 17},
		{"too long", []byte{0, 0, 0, 9, 'f', 'r', 'e', 'e'}, false, 0},
		{"too short", []byte{0, 0, 0, 7, 'f', 'r', 'e', 'e'}, false, 0},
		{"large too short", []byte{0, 0, 0, 1, 'm', 'd', 'a', 't', 0, 0, 0, 0, 0, 0, 0, 8}, false, 0},
		{"huge", []byte{0, 0, 0, 1, 'm', 'd', 'a', 't', 0xff, 0, 0, 0, 0, 0, 0, 0}, false, 0},
		{"truncated header", []byte{0, 0, 0}, false, 0},
	}
	for _, tc := range cases {
		bx, err := NextBox(tc.b, 0)
		if (err == nil) != tc.ok || (tc.ok && bx.End != tc.end) {
			t.Errorf("%s: box %+v, err %v", tc.name, bx, err)
		}
	}
}

// TestSplitNALUnits covers length-prefixed splitting.
func TestSplitNALUnits(t *testing.T) {
	got, err := SplitNALUnits([]byte{0, 0, 0, 2, 0x67, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0x65})
	if err != nil || len(got) != 2 || len(got[0]) != 2 || got[1][0] != 0x65 {
		t.Fatalf("%v %v", got, err)
	}
	for _, bad := range [][]byte{{0, 0, 0, 3, 1}, {0, 0, 1}, {0xff, 0xff, 0xff, 0xff, 1}} {
		if _, err := SplitNALUnits(bad); err == nil {
			t.Errorf("%x accepted", bad)
		}
	}
}

// FuzzRead feeds an init segment and a media segment to the reader: no panic, and every sample
// lies inside the segment and belongs to a track of the init.
func FuzzRead(f *testing.F) {
	v, a := mediatest.H265(0), mediatest.Opus(1)
	init, err := InitSegment([]media.Track{v, a})
	if err != nil {
		f.Fatal(err)
	}
	seg := mustFragment(f, mediatest.H264(0), mediatest.AAC(1))
	f.Add(init, seg)
	f.Add(init[:len(init)/2], seg[:len(seg)/2])
	f.Add([]byte{0, 0, 0, 8, 'm', 'o', 'o', 'v'}, []byte{0, 0, 0, 1, 'm', 'o', 'o', 'f', 0xff, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, init, seg []byte) {
		its, err := ReadInit(init)
		if err != nil {
			return
		}
		for _, it := range its {
			if it.Timescale == 0 || it.Track.ClockRate <= 0 {
				t.Fatalf("track %+v", it)
			}
		}
		r := NewReader(its)
		for range 2 {
			samples, err := r.Segment(seg)
			if err != nil {
				return
			}
			if len(samples) > MaxSamples {
				t.Fatalf("%d samples", len(samples))
			}
			for _, s := range samples {
				if s.Track < 0 || s.Track >= len(its) || len(s.Data) > len(seg) {
					t.Fatalf("sample %+v", s)
				}
				_, _ = SplitNALUnits(s.Data)
			}
		}
	})
}
