package dash

import (
	"testing"
	"time"
)

// TestParseClock: what timing sources answer: xs:dateTime and ISO 8601 with or without
// fractions and zone, seconds since 1970; garbage and times out of range are refused.
func TestParseClock(t *testing.T) {
	want := time.Date(2026, 11, 29, 22, 0, 1, 500_000_000, time.UTC)
	for _, s := range []string{"2026-11-29T22:00:01.5Z", "2026-11-29T22:00:01.500Z\n", " 2026-11-29T23:00:01.5+01:00",
		"2026-11-29T22:00:01.5", "1795989601.5"} {
		if got, err := parseClock(s); err != nil || !got.Equal(want) {
			t.Errorf("%q: %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "yesterday", "0", "1e300", "-5", "1900-01-01T00:00:00Z", "NaN"} {
		if got, err := parseClock(s); err == nil {
			t.Errorf("%q: %v, want an error", s, got)
		}
	}
}
