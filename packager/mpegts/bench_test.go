package mpegts

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"

	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
)

// BenchmarkDemux demuxes ten seconds of H.264 and AAC per iteration.
func BenchmarkDemux(b *testing.B) {
	tracks := mediatest.WithIDs(mediatest.H264(0), mediatest.AAC(0))
	aus := mediatest.Synth(tracks, 10, 0, 50, true)
	ts := muxAll(b, tracks, aus)
	b.SetBytes(int64(len(ts)))
	b.ReportAllocs()
	r := bytes.NewReader(ts)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
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
	runtime.ReadMemStats(&m1)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(aus)), "ns/unit")
	// Each unit is a new AccessUnit with its payload: units are shared read-only on the bus.
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(b.N*len(aus)), "allocs/unit")
}

// BenchmarkMux writes one access unit per iteration.
func BenchmarkMux(b *testing.B) {
	tracks := mediatest.WithIDs(mediatest.H264(0), mediatest.AAC(0))
	aus := mediatest.Synth(tracks, 10, 0, 50, true)
	m := newMuxer(b, io.Discard, tracks)
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
