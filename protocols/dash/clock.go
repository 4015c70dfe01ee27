package dash

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/Eyevinn/dash-mpd/mpd"
	"github.com/sluicemedia/sluice/internal/redact"
)

// The UTCTiming schemes read (ISO/IEC 23009-1 5.8.4.11 and 5.8.5.7, DASH-IF IOP "UTC timing"):
// the time in an HTTP answer's body (xs:dateTime, or ISO 8601, which the MPD's dateTime
// already is), in its Date header, or in the element's value. The NTP schemes are passed over.
const (
	schemeXSDate = "urn:mpeg:dash:utc:http-xsdate:2014"
	schemeISO    = "urn:mpeg:dash:utc:http-iso:2014"
	schemeHead   = "urn:mpeg:dash:utc:http-head:2014"
	schemeDirect = "urn:mpeg:dash:utc:direct:2014"
)

// Bounds of a clock measurement.
const (
	// maxTimingBody caps the body read from a timing source: a date is 20 to 35 bytes.
	maxTimingBody = 256
	// timingTimeout bounds one request to a timing source, timingBudget a whole measurement.
	timingTimeout = 5 * time.Second
	timingBudget  = 10 * time.Second
	// maxTimingSources bounds the sources (URLs of the elements' values) one measurement asks.
	maxTimingSources = 4
	// maxTimings bounds the UTCTiming elements kept from one MPD.
	maxTimings = 8
	// clockResync is how often a running pull measures the offset again, on an MPD reload.
	clockResync = 10 * time.Minute
)

// timing is one UTCTiming element: its scheme and value.
type timing struct{ scheme, value string }

// timingsOf returns the MPD's UTCTiming elements, at most maxTimings.
func timingsOf(x *mpd.MPD) []timing {
	var out []timing
	for _, d := range x.UTCTimings {
		if d == nil || len(out) == maxTimings {
			continue
		}
		out = append(out, timing{scheme: strings.TrimSpace(string(d.SchemeIdUri)), value: strings.TrimSpace(d.Value)})
	}
	return out
}

// errNoTiming is what a measurement of an MPD without a usable UTCTiming says.
var errNoTiming = errors.New("no UTCTiming of a supported scheme (http-xsdate, http-iso, http-head, direct)")

// clock keeps, for one pull, how far the origin's clock is ahead of this server's: a dynamic
// MPD's times (availabilityStartTime, and so the live edge and when each segment is out) are
// on the origin's clock. Used by one goroutine at a time: the pull's start, then its refresher.
type clock struct {
	ld      *loader
	log     *slog.Logger
	offset  time.Duration
	synced  time.Time // when last measured; zero before
	timings []timing  // of the MPD last measured with
	where   string    // its Location
	read    bool      // a measurement succeeded: the offset is the origin's
	warned  bool
}

// sync measures the offset from m's UTCTiming when m is dynamic and it was never measured, its
// UTCTiming or Location changed, or clockResync passed; fetched is when m's MPD arrived (for direct), base
// its URL. A measurement that fails keeps the offset there was (0 at first: this server's
// clock) and is logged once a pull, at warn. It sets m.offset and tells whether it changed.
func (c *clock) sync(ctx context.Context, m *manifest, base *url.URL, fetched time.Time) bool {
	if !m.dynamic {
		return false
	}
	was := c.offset
	where := ""
	if m.location != nil {
		where = m.location.String()
	}
	if c.synced.IsZero() || !sameTimings(c.timings, m.timings) || c.where != where || time.Since(c.synced) >= clockResync {
		c.synced, c.timings, c.where = time.Now(), m.timings, where
		off, from, err := measureClock(ctx, c.ld, base, m.timings, fetched)
		switch {
		case errors.Is(err, errNoTiming) && len(m.timings) == 0:
			// No UTCTiming at all (ffmpeg writes none): this server's clock, as documented.
		case err != nil && !c.warned && ctx.Err() == nil:
			c.warned = true
			c.log.Warn("dash: UTCTiming unusable; the live edge follows this server's clock", "error", err)
		case err == nil:
			// Said at the first measurement and when the clocks drifted apart since; a
			// measurement is good to a few milliseconds on a quiet network (a second with
			// http-head).
			level := slog.LevelDebug
			if !c.read || (off-c.offset).Abs() > time.Second {
				level = slog.LevelInfo
			}
			c.log.Log(ctx, level, "dash: origin clock", "offset", off.Round(time.Millisecond), "source", from)
			c.offset, c.read = off, true
		}
	}
	m.offset = c.offset
	return c.offset != was
}

// sameTimings tells whether two MPDs give their time alike: the same elements, the values of
// direct ones aside (each MPD carries the time it was made at).
func sameTimings(a, b []timing) bool {
	return slices.EqualFunc(a, b, func(x, y timing) bool {
		return x.scheme == y.scheme && (x.value == y.value || x.scheme == schemeDirect)
	})
}

// measureClock returns how far the origin's clock is ahead of this server's, from the first of
// timings that gives a time, and what gave it. Each value of an HTTP scheme is a
// white-space-separated list of URLs, resolved against base.
func measureClock(ctx context.Context, ld *loader, base *url.URL, timings []timing, fetched time.Time) (time.Duration, string, error) {
	ctx, cancel := context.WithTimeout(ctx, timingBudget)
	defer cancel()
	err, asked := errNoTiming, 0
	for _, tm := range timings {
		switch tm.scheme {
		case schemeDirect:
			at, perr := parseClock(tm.value)
			if perr == nil {
				return at.Sub(fetched), tm.scheme, nil
			}
			err = fmt.Errorf("%s: %w", tm.scheme, perr)
		case schemeXSDate, schemeISO, schemeHead:
			for _, raw := range strings.Fields(tm.value) {
				if asked++; asked > maxTimingSources {
					return 0, "", err
				}
				u, perr := base.Parse(raw)
				if perr == nil && u.Scheme != "http" && u.Scheme != "https" {
					perr = fmt.Errorf("scheme %q, want http or https", u.Scheme)
				}
				if perr != nil {
					err = fmt.Errorf("%s %.100q: %w", tm.scheme, redact.URL(raw), redact.Error(perr, raw))
					continue
				}
				off, aerr := askClock(ctx, ld, tm.scheme, u)
				if aerr == nil {
					return off, redact.Parsed(u), nil
				}
				err = fmt.Errorf("%s %s: %w", tm.scheme, redact.Parsed(u), aerr)
			}
		}
	}
	return 0, "", err
}

// askClock asks the timing source u of scheme for its time, and returns how far it is ahead of
// this server's clock at the middle of the request.
func askClock(ctx context.Context, ld *loader, scheme string, u *url.URL) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, timingTimeout)
	defer cancel()
	sent := time.Now()
	var at time.Time
	if scheme == schemeHead {
		h, err := ld.Head(ctx, u)
		if err != nil {
			return 0, err
		}
		date := h.Get("Date")
		if at, err = http.ParseTime(date); err != nil {
			return 0, fmt.Errorf("header Date %.40q: %w", date, err)
		}
		at = at.Add(500 * time.Millisecond) // a whole second: its middle
	} else {
		f, err := ld.Get(ctx, u, nil, maxTimingBody)
		if err != nil {
			return 0, err
		}
		if at, err = parseClock(string(f.Body)); err != nil {
			return 0, err
		}
	}
	back := time.Now()
	return at.Sub(sent.Add(back.Sub(sent) / 2)), nil
}

// parseClock reads a timing source's time: an xs:dateTime or ISO 8601 date and time (without a
// zone: UTC), or, as some time servers answer, seconds since 1970. A time outside 2000 to 2200
// is refused: garbage, not a clock.
func parseClock(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	t, err := parseDateTime(s)
	if err != nil {
		secs, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || !(secs >= 0 && secs <= 1e10) { // NaN too
			return time.Time{}, fmt.Errorf("time %.40q: neither a date nor seconds since 1970", s)
		}
		t = time.Unix(0, int64(secs*1e9))
	}
	if t.Year() < 2000 || t.Year() > 2200 {
		return time.Time{}, fmt.Errorf("time %.40q: out of range", s)
	}
	return t, nil
}
