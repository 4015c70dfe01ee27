package avi

import (
	"math/rand/v2"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
)

// BenchmarkWriteUnit writes 25 fps video and AAC units, after a warm-up that grows the index
// buffers, into a writer that keeps no bytes.
func BenchmarkWriteUnit(b *testing.B) {
	units := synthUnits(rand.New(rand.NewPCG(7, 8)), 10, -1, -1)
	var span [2]int64
	span[0], span[1] = 10*90000, 10*48000
	w, err := NewWriter(&discard{}, synthTracks(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	// Warm-up: two passes fill the segment buffers.
	copies := make([]media.AccessUnit, len(units))
	for i, au := range units {
		copies[i] = *au
	}
	round := int64(0)
	next := func(i int) *media.AccessUnit {
		au := &copies[i%len(copies)]
		if i%len(copies) == 0 && i > 0 {
			round++
		}
		au.DTS = units[i%len(units)].DTS + round*span[au.Track]
		return au
	}
	i := 0
	for ; i < 2*len(units); i++ {
		if err := w.WriteUnit(next(i)); err != nil {
			b.Fatal(err)
		}
	}
	var bytes int64
	for _, au := range units {
		bytes += int64(au.Size())
	}
	b.SetBytes(bytes / int64(len(units)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := w.WriteUnit(next(i)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
