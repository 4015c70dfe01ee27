package streamtest

import (
	"fmt"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
)

// CheckCBRReceived waits up to d until col has collected at least atLeast units, then checks
// that s carries the CBR source's tracks (CheckCBRTracks) and that the units are normalised
// (CheckUnits). It returns the units.
func CheckCBRReceived(t testing.TB, s *stream.Stream, col *Collector, atLeast int, d time.Duration) []*media.AccessUnit {
	t.Helper()
	testutil.Eventually(t, d, fmt.Sprintf("%d units", atLeast), func() bool { return len(col.Snapshot()) >= atLeast })
	CheckCBRTracks(t, s.Tracks())
	aus := col.Snapshot()
	CheckUnits(t, s.Tracks(), aus)
	return aus
}

// CheckCBRLive runs publish, a publisher of the CBR source in real time (CBRArgs), into s in
// the background, checks the stream's rates while it runs (CheckRates: the CBR bitrate at
// 25 fps), fails when publish fails, waits up to 10 s for the session to end, and checks what
// came (CheckCBRReceived: at least atLeast units).
func CheckCBRLive(t testing.TB, s *stream.Stream, publish func() error, atLeast int) {
	t.Helper()
	col := Collect(t, s)
	pubErr := make(chan error, 1)
	go func() { pubErr <- publish() }()
	CheckRates(t, s, float64(CBRVideoKbps+CBRAudioKbps), 25)
	if err := <-pubErr; err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "the session to end", func() bool { return !s.Publishing() })
	CheckCBRReceived(t, s, col, atLeast, 10*time.Second)
}
