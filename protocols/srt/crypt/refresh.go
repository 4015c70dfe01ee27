package crypt

import "fmt"

const (
	// DefaultRefreshRate is libsrt's SRTO_KMREFRESHRATE default: a sender switches to a new SEK
	// after this many packets (2^24).
	DefaultRefreshRate = 1 << 24
	// DefaultPreAnnounce is libsrt's SRTO_KMPREANNOUNCE default: the next SEK is announced this
	// many packets before the switch, and the old one retired this many packets after (2^12).
	DefaultPreAnnounce = 1 << 12
)

// Refresh sets the key refresh schedule of a Sender, in packets; zero fields take libsrt's
// defaults (Rate DefaultRefreshRate; PreAnnounce DefaultPreAnnounce, or (Rate-1)/2 when that is
// smaller). As in libsrt, PreAnnounce may be at most (Rate-1)/2.
type Refresh struct{ Rate, PreAnnounce uint32 }

// resolve returns the rates in use, or ErrRefreshRates for a schedule libsrt would refuse.
func (r Refresh) resolve() (rate, pre uint32, err error) {
	rate = r.Rate
	if rate == 0 {
		rate = DefaultRefreshRate
	}
	pre = r.PreAnnounce
	if pre == 0 {
		pre = min(DefaultPreAnnounce, (rate-1)/2)
	}
	if pre == 0 || pre > (rate-1)/2 {
		return 0, 0, fmt.Errorf("%w: refresh rate %d packets, pre-announce %d: want 1 ≤ pre-announce ≤ (rate-1)/2",
			ErrRefreshRates, rate, pre)
	}
	return rate, pre, nil
}
