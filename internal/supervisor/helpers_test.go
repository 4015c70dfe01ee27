package supervisor

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// recorder collects what OnChange gets.
type recorder struct {
	mu  sync.Mutex
	got []Status
}

func (r *recorder) add(st Status) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, st)
}

func (r *recorder) all() []Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Status(nil), r.got...)
}

func (r *recorder) states() []State {
	var out []State
	for _, st := range r.all() {
		out = append(out, st.State)
	}
	return out
}

// eventually fails the test unless cond holds within d; it polls every 2 ms, to see states
// that last only a few milliseconds.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	testutil.EventuallyEvery(t, d, 2*time.Millisecond, what, cond)
}

// grandchildPID waits for the line in which a test's shell printed its background child's pid
// (echo $!) to out, and returns that pid.
func grandchildPID(t *testing.T, out *testutil.SyncBuffer) string {
	t.Helper()
	eventually(t, 5*time.Second, "grandchild pid", func() bool { return strings.HasSuffix(out.String(), "\n") })
	return strings.TrimSpace(out.String())
}

// stateIs is a condition for eventually.
func stateIs(s *Supervisor, want State) func() bool {
	return func() bool { return s.Status().State == want }
}

// backoffLog is a slog.Handler that keeps the backoff of every failure the supervisor logs,
// so tests check the schedule exactly rather than by the clock.
type backoffLog struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (b *backoffLog) logger() *slog.Logger { return slog.New(b) }

func (b *backoffLog) Enabled(context.Context, slog.Level) bool { return true }

func (b *backoffLog) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "backoff" {
			b.mu.Lock()
			b.delays = append(b.delays, a.Value.Duration())
			b.mu.Unlock()
		}
		return true
	})
	return nil
}

func (b *backoffLog) WithAttrs([]slog.Attr) slog.Handler { return b }

func (b *backoffLog) WithGroup(string) slog.Handler { return b }

func (b *backoffLog) all() []time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]time.Duration(nil), b.delays...)
}
