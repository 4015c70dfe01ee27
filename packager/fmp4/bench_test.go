package fmp4

import (
	"runtime"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
)

// BenchmarkAdd measures appending one video unit (two NAL units, 20 kB) to the open fragment;
// a GOP of 50 is flushed every 50 units, outside the timer's per-unit figure.
func BenchmarkAdd(b *testing.B) {
	v := mediatest.H264(0)
	f, _ := NewFragmenter([]media.Track{v})
	aus := make([]*media.AccessUnit, 50)
	for i := range aus {
		aus[i] = videoAU(v, int64(i)*3600, int64(i)*3600+7200, i == 0, 20000)
	}
	b.ReportAllocs()
	b.SetBytes(20000)
	for i := 0; b.Loop(); i++ {
		au := aus[i%50]
		if i%50 == 0 && i > 0 {
			b.StopTimer()
			_, _ = f.Flush(uint32(i), au)
			b.StartTimer()
		}
		if err := f.Add(au); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFragment measures writing a 2 s fragment of 25 fps video (20 kB frames) and AAC:
// 50 + 94 units added, then flushed. Allocations are per fragment, not per unit.
func BenchmarkFragment(b *testing.B) {
	v, a := mediatest.H264(0), mediatest.AAC(1)
	var aus []*media.AccessUnit
	audio := int64(0)
	for i := range 50 {
		dts := int64(i) * 3600
		aus = append(aus, videoAU(v, dts, dts+7200, i == 0, 20000))
		for media.Rescale(audio, 48000, 90000) < dts+3600 {
			aus = append(aus, audioAU(a, audio, 300))
			audio += 1024
		}
	}
	f, _ := NewFragmenter([]media.Track{v, a})
	b.ReportAllocs()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for b.Loop() {
		for _, au := range aus {
			if err := f.Add(au); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := f.Flush(1, nil); err != nil {
			b.Fatal(err)
		}
	}
	runtime.ReadMemStats(&m1)
	// The allocations are the fragment's boxes and bytes, per fragment, not per unit.
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(b.N*len(aus)), "allocs/unit")
}
