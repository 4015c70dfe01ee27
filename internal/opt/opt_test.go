package opt

import (
	"log/slog"
	"testing"
	"time"
)

func TestDefaults(t *testing.T) {
	d, n, f := time.Duration(0), -3, 2.5
	Positive(&d, time.Second)
	Positive(&n, 7)
	Positive(&f, 9)
	if d != time.Second || n != 7 || f != 2.5 {
		t.Errorf("Positive: got %v %v %v, want 1s 7 2.5", d, n, f)
	}
	s, kept, lg := "", "set", (*slog.Logger)(nil)
	Zero(&s, "def")
	Zero(&kept, "def")
	Zero(&lg, slog.Default())
	if s != "def" || kept != "set" || lg != slog.Default() {
		t.Errorf("Zero: got %q %q %p", s, kept, lg)
	}
	var now func() time.Time
	Clock(&now)
	if now == nil || time.Since(now()) > time.Minute {
		t.Error("Clock: no clock set")
	}
	fixed := func() time.Time { return time.Unix(5, 0) }
	mine := fixed
	Clock(&mine)
	if !mine().Equal(time.Unix(5, 0)) {
		t.Error("Clock replaced a clock that was set")
	}
}
