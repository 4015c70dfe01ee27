package streamtest

import (
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
)

// CheckRestarts runs an input 4 times in a row into s, as the supervisor restarts it: each
// run must return nil, s must mark 3 discontinuities, and no goroutine or descriptor may be
// left behind (the test must not be parallel: it counts them).
func CheckRestarts(t testing.TB, s *stream.Stream, run func() error) {
	t.Helper()
	b0 := testutil.TakeBaseline()
	for range 4 {
		if err := run(); err != nil {
			t.Fatal(err)
		}
	}
	if d := s.Discontinuities(); d != 3 {
		t.Errorf("%d discontinuities, want 3", d)
	}
	b0.Check(t, 10*time.Second)
}
