package ffin

import (
	"math"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
)

// checkRates samples the stream's bitrate and fps every 250 ms once the publisher has sent
// for 3 s, until it stops or 20 s pass, and passes when one sample is within 15 % of both
// wants: on a loaded machine a starved encoder can run below real time for a while.
func checkRates(t testing.TB, s *stream.Stream, wantKbps, wantFPS float64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for st := s.Stats(); !st.Publishing || time.Since(st.Since) < 3*time.Second; st = s.Stats() {
		if time.Now().After(deadline) {
			t.Fatal("no 3 s of media within 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	deadline = time.Now().Add(20 * time.Second)
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
