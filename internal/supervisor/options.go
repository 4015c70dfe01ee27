package supervisor

import (
	"log/slog"
	"time"

	"github.com/sluicemedia/sluice/internal/opt"
)

// Defaults of Options.
const (
	DefaultInitial     = 500 * time.Millisecond
	DefaultMax         = 10 * time.Second
	DefaultStableAfter = 10 * time.Second
)

// Options tune a Supervisor. The zero value uses the defaults.
type Options struct {
	// Logger receives failures and transitions; default slog.Default().
	Logger *slog.Logger
	// OnChange is called after every change of Status, in order, with no lock held: it may
	// call Status. It runs on the goroutine that made the change (or one delivering earlier
	// changes), so it must return quickly and must not call Start or Stop.
	OnChange func(Status)
	// Initial is the first backoff after a failure; default 0.5 s. Each failure doubles it.
	Initial time.Duration
	// Max caps the backoff; default 10 s.
	Max time.Duration
	// StableAfter is how long an attempt must stay Running for the backoff to go back to
	// Initial; default 10 s.
	StableAfter time.Duration
}

// withDefaults fills the unset fields.
func (o Options) withDefaults() Options {
	opt.Zero(&o.Logger, slog.Default())
	opt.Positive(&o.Initial, DefaultInitial)
	opt.Positive(&o.Max, DefaultMax)
	if o.Initial > o.Max {
		o.Initial = o.Max
	}
	opt.Positive(&o.StableAfter, DefaultStableAfter)
	return o
}
