package stream

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
)

// BenchmarkFanOut100 writes to 100 readers, each draining in its own goroutine. One op is one
// unit written. allocs/op counts the whole process, readers included.
func BenchmarkFanOut100(b *testing.B) { benchFanOut(b, 100) }

// BenchmarkWrite1Reader writes to one reader draining in its own goroutine.
func BenchmarkWrite1Reader(b *testing.B) { benchFanOut(b, 1) }

func benchFanOut(b *testing.B, readers int) {
	s, p, units := benchPublisher(b)

	var wg sync.WaitGroup
	rs := make([]*Reader, readers)
	received := make([]int, readers)
	for i := range rs {
		rs[i] = mustReader(b, s, fmt.Sprint("reader ", i))
		wg.Go(func() {
			for {
				if _, err := rs[i].Read(context.Background()); err != nil {
					return
				}
				received[i]++
			}
		})
	}

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := p.Write(units[i%len(units)]); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	s.Close()
	wg.Wait()

	var got, dropped int
	for i, r := range rs {
		got += received[i]
		dropped += int(r.Dropped())
	}
	perReader := float64(b.N) * float64(readers)
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/perReader, "allocs/unit/reader")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/perReader, "ns/unit/reader")
	b.ReportMetric(float64(dropped)/perReader, "dropped/unit/reader")
	if got+dropped < b.N*readers-readers*len(units) { // a GOP may be skipped unread at the end
		b.Errorf("received %d and dropped %d of %d", got, dropped, b.N*readers)
	}
}

// BenchmarkFanOut100Drained writes to 100 readers that the benchmark drains itself, every 256
// units with the timer stopped: the writer's cost per unit without the scheduler's, which makes
// BenchmarkFanOut100 vary with how often the readers sleep and wake.
func BenchmarkFanOut100Drained(b *testing.B) {
	s, p, units := benchPublisher(b)
	defer s.Close()
	rs := make([]*Reader, 100)
	for i := range rs {
		rs[i] = mustReader(b, s, fmt.Sprint("reader ", i))
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := p.Write(units[i%len(units)]); err != nil {
			b.Fatal(err)
		}
		if i%256 == 255 {
			b.StopTimer()
			for _, r := range rs {
				for r.Pending() > 0 {
					if _, err := r.Read(ctx); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.StartTimer()
		}
	}
	b.StopTimer()
	for _, r := range rs {
		if r.Dropped() != 0 {
			b.Fatalf("reader %q dropped %d", r.Name(), r.Dropped())
		}
	}
}

// benchPublisher returns a stream of the audio and video tracks with its publisher, and 1200
// units of 1000 bytes to write round robin: a key frame every 60 video frames, audio in between.
func benchPublisher(b *testing.B) (*Stream, *Publisher, []*media.AccessUnit) {
	b.Helper()
	s := New("bench", Options{Log: slog.New(slog.DiscardHandler), LagLimit: time.Hour})
	p, err := s.Publish()
	if err != nil {
		b.Fatal(err)
	}
	if err := p.SetTracks(avTracks); err != nil {
		b.Fatal(err)
	}
	units := make([]*media.AccessUnit, 1200)
	payload := make([]byte, 1000)
	for i := range units {
		units[i] = &media.AccessUnit{Track: i % 2, Key: i%120 == 0, Payload: [][]byte{payload}, Arrival: time.Now()}
	}
	return s, p, units
}
