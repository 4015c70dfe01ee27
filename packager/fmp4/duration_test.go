package fmp4

import (
	"errors"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
)

// TestFileInitDurations: a file's init segment has a mehd and 64-bit duration fields, zero at
// first, and the patches state each trak's duration and the movie's (the longest) in the
// boxes' own timescales, whatever the trak order.
func TestFileInitDurations(t *testing.T) {
	tracks := []media.Track{mediatest.AAC(1), mediatest.H264(0)}
	fi, err := FileInitSegment(tracks)
	if err != nil {
		t.Fatal(err)
	}
	f := fileView{decode(t, fi.Data)}
	if f.Moov.Mvex.Mehd == nil || f.Moov.Mvhd.Duration != 0 || f.Moov.Mvex.Mehd.FragmentDuration != 0 {
		t.Fatalf("mehd %+v, mvhd duration %d: want a mehd and zeros", f.Moov.Mvex.Mehd, f.Moov.Mvhd.Duration)
	}
	if ids := fi.TrackIDs(); len(ids) != 2 || ids[0] != 2 || ids[1] != 1 {
		t.Fatalf("track IDs %v, want the traks' order [2 1]", ids)
	}
	// 10 h: past what a 32-bit field holds at 90 kHz (13.25 h) in the movie timescale? Not
	// quite, so 30 h for the audio.
	d := []time.Duration{30 * time.Hour, 10*time.Second + 40*time.Millisecond}
	b := append([]byte(nil), fi.Data...)
	fi.Apply(b, d)
	f = fileView{decode(t, b)}
	mvScale := uint64(f.Moov.Mvhd.Timescale)
	if got := f.Moov.Mvhd.Duration; got != uint64(30*3600)*mvScale {
		t.Errorf("mvhd duration %d, want %d", got, uint64(30*3600)*mvScale)
	}
	if got := f.Moov.Mvex.Mehd.FragmentDuration; uint64(got) != uint64(30*3600)*mvScale {
		t.Errorf("mehd %d", got)
	}
	for i, trak := range f.Moov.Traks {
		ts := uint64(trak.Mdia.Mdhd.Timescale)
		want := uint64(d[i].Milliseconds())
		if trak.Tkhd.Duration != want*mvScale/1000 || trak.Mdia.Mdhd.Duration != want*ts/1000 {
			t.Errorf("trak %d: tkhd %d, mdhd %d; want %d and %d", i, trak.Tkhd.Duration, trak.Mdia.Mdhd.Duration, want*mvScale/1000, want*ts/1000)
		}
	}
	// The patches are the same bytes read back from the file by ParseFileInit.
	again, err := ParseFileInit(b)
	if err != nil {
		t.Fatal(err)
	}
	if p, q := fi.Patches(d), again.Patches(d); len(p) != 6 || len(q) != 6 || p[0] != q[0] || p[5] != q[5] {
		t.Errorf("patches %v and %v differ", p, q)
	}
}

// TestParseFileInitRejects: a live init segment (32-bit fields, no mehd) has no room for a
// duration.
func TestParseFileInitRejects(t *testing.T) {
	b, err := InitSegment([]media.Track{mediatest.H264(0)})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range [][]byte{b, nil, b[:40]} {
		if _, err := ParseFileInit(in); err == nil {
			t.Errorf("ParseFileInit of %d bytes succeeded", len(in))
		}
	}
	if _, err := FileInitSegment(nil); !errors.Is(err, ErrMissingParams) {
		t.Errorf("no tracks: %v", err)
	}
}

// FuzzParseFileInit parses arbitrary bytes (a file's start read back by the repair): no panic,
// and every patch lies inside what was parsed.
func FuzzParseFileInit(f *testing.F) {
	fi, err := FileInitSegment([]media.Track{mediatest.H264(0), mediatest.AAC(1)})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(fi.Data)
	f.Fuzz(func(t *testing.T, b []byte) {
		fi, err := ParseFileInit(b)
		if err != nil {
			return
		}
		for _, p := range fi.Patches([]time.Duration{time.Second, time.Hour}) {
			if p.Off < 0 || p.Off+8 > len(b) {
				t.Fatalf("patch at %d of %d bytes", p.Off, len(b))
			}
		}
	})
}
