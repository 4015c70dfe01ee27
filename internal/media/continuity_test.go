package media

import "testing"

// TestContinuity: the source's timestamps are kept until a discontinuity (or start from 0 with
// FromZero); after one, the output resumes ContinuityGap past the latest timestamp given,
// whatever the new session's clock, and later units of the session keep their spacing.
func TestContinuity(t *testing.T) {
	type step struct {
		dts  int64
		disc bool
		want int64 // output timestamp
	}
	for _, c := range []struct {
		name  string
		rate  int
		zero  bool
		steps []step
	}{
		{"keeps the source at 90 kHz", 90000, false, []step{
			{1000, false, 1000}, {4000, false, 4000},
			// A new session whose clock restarted near 0: 0.5 s (45 000 ticks) after 4000.
			{10, true, 49000}, {3010, false, 52000},
			// A session whose clock jumped forward: the same gap, not the jump.
			{900000, true, 97000}, {903000, false, 100000},
		}},
		{"from zero in milliseconds", 1000, true, []step{
			{10000, false, 0}, {10040, false, 40}, {10020, false, 20},
			{0, true, 540}, {40, false, 580},
		}},
		{"a discontinuity on the first unit starts nothing", 90000, false, []step{
			{7000, true, 7000}, {10000, false, 10000},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := Continuity{Rate: c.rate, FromZero: c.zero}
			for i, s := range c.steps {
				if got := s.dts + k.Offset(s.dts, s.disc); got != s.want {
					t.Fatalf("step %d (dts %d, discontinuity %v): output %d, want %d", i, s.dts, s.disc, got, s.want)
				}
			}
			k.Reset()
			if _, ok := k.End(); ok {
				t.Error("End after Reset reports a timestamp")
			}
		})
	}
	if g := (&Continuity{}).Gap(); g != ContinuityGap.Milliseconds()*90 {
		t.Errorf("gap of the zero value %d, want %d (90 kHz)", g, ContinuityGap.Milliseconds()*90)
	}
	if g := (&Continuity{Rate: 1_000_000_000}).Gap(); g != ContinuityGap.Nanoseconds() {
		t.Errorf("gap in nanoseconds %d, want %d", g, ContinuityGap.Nanoseconds())
	}
}
