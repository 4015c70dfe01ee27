package mpegts

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// BenchmarkDemux demuxes ten seconds of H.264 and AAC per iteration.
func BenchmarkDemux(b *testing.B) {
	tracks := withIDs(h264Track(), aacTrack())
	aus := synthStream(tracks, 10, 0, 50, true)
	ts := muxAll(b, tracks, aus)
	b.SetBytes(int64(len(ts)))
	b.ReportAllocs()
	r := bytes.NewReader(ts)
	for b.Loop() {
		r.Reset(ts)
		d := NewDemuxer(r)
		n := 0
		for {
			_, err := d.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != len(aus) {
			b.Fatalf("%d units, want %d", n, len(aus))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(aus)), "ns/unit")
}

// BenchmarkMux writes one access unit per iteration.
func BenchmarkMux(b *testing.B) {
	tracks := withIDs(h264Track(), aacTrack())
	aus := synthStream(tracks, 10, 0, 50, true)
	m, err := NewMuxer(io.Discard, tracks)
	if err != nil {
		b.Fatal(err)
	}
	size := 0
	for _, au := range aus {
		size += au.Size()
	}
	b.SetBytes(int64(size / len(aus)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := m.WriteAccessUnit(aus[i%len(aus)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
