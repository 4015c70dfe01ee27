// Package streamtest holds what the protocol packages' tests share around a stream.Stream:
// publishing units as a live source would, collecting what readers get, checking units,
// rates and that goroutines and descriptors come back. For tests only.
package streamtest

import (
	"context"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/packager/nal"
)

// Play publishes units into s as one publisher session, looping loops times with timestamps
// shifted to keep increasing, and closes the publisher at the end. speed paces the units by
// their timestamps: 1 is real time, 2 twice as fast; 0 writes them at once. It returns ctx's
// error when ctx ends first.
func Play(ctx context.Context, s *stream.Stream, tracks []media.Track, aus []*media.AccessUnit, speed float64, loops int) error {
	pub, err := s.Publish()
	if err != nil {
		return err
	}
	defer pub.Close()
	if err := pub.SetTracks(tracks); err != nil {
		return err
	}
	at90 := func(au *media.AccessUnit) int64 {
		return media.Rescale(au.DTS, tracks[au.Track].ClockRate, 90000)
	}
	first, end := at90(aus[0]), int64(0)
	for _, au := range aus {
		end = max(end, at90(au))
	}
	span := end - first + 3600 // one loop, at 90 kHz
	start := time.Now()
	for l := range loops {
		for _, au := range aus {
			c := *au
			off := media.Rescale(int64(l)*span, 90000, tracks[au.Track].ClockRate)
			c.DTS += off
			c.PTS += off
			if speed > 0 {
				at := start.Add(time.Duration(float64(at90(&c)-first) / speed * float64(time.Second) / 90000))
				select {
				case <-time.After(time.Until(at)):
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			c.Arrival = time.Now()
			if err := pub.Write(&c); err != nil {
				return err
			}
		}
	}
	return nil
}

// Collector reads a stream in the background and keeps what it saw.
type Collector struct {
	mu     sync.Mutex
	units  []*media.AccessUnit
	cancel context.CancelFunc
	done   chan struct{}
}

// Collect starts a Collector on s; it stops when the test ends, or at Stop.
func Collect(t testing.TB, s *stream.Stream) *Collector {
	t.Helper()
	r, err := s.NewReader("test")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Collector{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		defer r.Close()
		for {
			au, err := r.Read(ctx)
			if err != nil {
				return
			}
			c.mu.Lock()
			c.units = append(c.units, au)
			c.mu.Unlock()
		}
	}()
	t.Cleanup(c.Stop)
	return c
}

// Stop ends the collection. Idempotent.
func (c *Collector) Stop() { c.cancel(); <-c.done }

// Snapshot returns the units collected so far.
func (c *Collector) Snapshot() []*media.AccessUnit {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*media.AccessUnit(nil), c.units...)
}

// CheckUnits checks, per publisher session: DTS strictly increases per track, PTS ≥ DTS, and
// the first video unit is a key frame.
func CheckUnits(t testing.TB, tracks []media.Track, aus []*media.AccessUnit) {
	t.Helper()
	last := map[int]int64{}
	seenVideo := false
	for i, au := range aus {
		if au.Discontinuity {
			clear(last)
			seenVideo = false
		}
		if au.Track >= len(tracks) {
			t.Fatalf("unit %d of track %d, %d tracks", i, au.Track, len(tracks))
		}
		if l, ok := last[au.Track]; ok && au.DTS <= l {
			t.Fatalf("unit %d track %d: DTS %d after %d", i, au.Track, au.DTS, l)
		}
		last[au.Track] = au.DTS
		if au.PTS < au.DTS {
			t.Fatalf("unit %d track %d: PTS %d < DTS %d", i, au.Track, au.PTS, au.DTS)
		}
		if tracks[au.Track].Codec.IsVideo() && !seenVideo {
			if !au.Key {
				t.Fatalf("unit %d: first video unit of a session is not a key frame", i)
			}
			seenVideo = true
		}
	}
}

// CheckPulled checks what a pull input published: CheckUnits and CheckParams.
func CheckPulled(t testing.TB, tracks []media.Track, aus []*media.AccessUnit) {
	t.Helper()
	CheckUnits(t, tracks, aus)
	CheckParams(t, tracks, aus)
}

// CheckParams checks that every video key frame carries its parameter sets and that access
// unit delimiters were dropped, as ingest normalisation promises.
func CheckParams(t testing.TB, tracks []media.Track, aus []*media.AccessUnit) {
	t.Helper()
	for i, au := range aus {
		c := tracks[au.Track].Codec
		if !c.IsVideo() {
			continue
		}
		for _, n := range au.Payload {
			if len(n) > 0 && IsAUD(c, n) {
				t.Fatalf("unit %d: AUD not dropped", i)
			}
		}
		if au.Key && !HasParams(c, au.Payload) {
			t.Fatalf("unit %d: key frame without parameter sets", i)
		}
	}
}

// HasParams tells whether the NAL units hold the codec's parameter sets (VPS for H.265, SPS, PPS).
func HasParams(c media.Codec, nalus [][]byte) bool {
	seen := map[nal.Kind]bool{}
	for _, n := range nalus {
		if len(n) > 0 {
			seen[nal.Classify(c, n)] = true
		}
	}
	return seen[nal.SPS] && seen[nal.PPS] && (c != media.CodecH265 || seen[nal.VPS])
}

// IsAUD tells whether a NAL unit is an access unit delimiter.
func IsAUD(c media.Codec, n []byte) bool { return nal.Classify(c, n) == nal.AUD }

// WaitTracks waits for the stream to have tracks and returns them.
func WaitTracks(t testing.TB, s *stream.Stream, d time.Duration) []media.Track {
	t.Helper()
	testutil.Eventually(t, d, "tracks", func() bool { return len(s.Tracks()) > 0 })
	return s.Tracks()
}

// MeanBitrate samples the stream's reported bitrate every 200 ms for d and returns the mean,
// in kbit/s.
func MeanBitrate(s *stream.Stream, d time.Duration) float64 {
	var sum float64
	var n int
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		sum += s.Stats().Bitrate
		n++
	}
	return sum / float64(n)
}

// CheckRates samples the stream's bitrate and fps every 250 ms once the publisher has sent
// for 3 s, until it stops or 20 s pass, and passes when one sample is within 15 % of both
// wants: on a loaded machine a starved encoder can run below real time for a while.
func CheckRates(t testing.TB, s *stream.Stream, wantKbps, wantFPS float64) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, "3 s of media", func() bool {
		st := s.Stats()
		return st.Publishing && time.Since(st.Since) > 3*time.Second
	})
	deadline := time.Now().Add(20 * time.Second)
	var best stream.Stats
	bestErr := math.Inf(1)
	for time.Now().Before(deadline) {
		st := s.Stats()
		if !st.Publishing {
			break
		}
		e := max(math.Abs(st.Bitrate-wantKbps)/wantKbps, math.Abs(st.FPS-wantFPS)/wantFPS)
		if e < bestErr {
			best, bestErr = st, e
		}
		if e <= 0.15 {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("bitrate %.0f kbit/s (want %.0f), fps %.1f (want %.0f)", best.Bitrate, wantKbps, best.FPS, wantFPS)
	if bestErr > 0.15 {
		t.Errorf("bitrate %.0f kbit/s and fps %.1f, want %.0f and %.0f ± 15 %%", best.Bitrate, best.FPS, wantKbps, wantFPS)
	}
}

// Within fails unless got is within tol (a fraction) of want.
func Within(t testing.TB, what string, got, want, tol float64) {
	t.Helper()
	if got < want*(1-tol) || got > want*(1+tol) {
		t.Errorf("%s: %.0f, want %.0f ± %.0f%%", what, got, want, tol*100)
	}
}

// Serve serves dir over HTTP until the test ends.
func Serve(t testing.TB, dir string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	return srv
}

// WaitFile waits for path to exist.
func WaitFile(t testing.TB, path string) {
	t.Helper()
	testutil.Eventually(t, 60*time.Second, "ffmpeg writes "+path, func() bool {
		_, err := os.Stat(path)
		return err == nil
	})
}

// Log is a logger for the code under test: to stderr with -v, else discarded.
func Log() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.DiscardHandler)
}
