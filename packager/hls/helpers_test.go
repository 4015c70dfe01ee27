package hls_test

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/packager/hls"
	"github.com/sluicemedia/sluice/packager/segment"
	"github.com/sluicemedia/sluice/packager/segment/segtest"
)

var (
	wall  = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	quiet = slog.New(slog.DiscardHandler)
)

// fixture is segtest's Fixture with the hls handler.
type fixture = segtest.For[*hls.Handler]

func newFixture(t testing.TB, opts hls.Options) *fixture {
	t.Helper()
	return newFixtureWith(t, opts, segtest.FixtureOptions{Window: opts.Window, Wall: wall, Now: wall, Base: "/hls/p1/p1/"})
}

// newFixtureWith is newFixture with the fixture's options o.
func newFixtureWith(t testing.TB, opts hls.Options, o segtest.FixtureOptions) *fixture {
	t.Helper()
	return segtest.NewFor(t, o, func(st *segment.Store) *hls.Handler { return hls.New(st, opts) })
}

// playlist fetches index.m3u8 and fails unless it is served.
func playlist(t *testing.T, f *fixture) string {
	t.Helper()
	res, body := f.Get(t, http.MethodGet, "index.m3u8")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("playlist: %d %s", res.StatusCode, body)
	}
	return body
}

// lines returns the lines of text that start with prefix.
func lines(text, prefix string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}
