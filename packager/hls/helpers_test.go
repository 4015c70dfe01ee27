package hls_test

import (
	"strings"
	"testing"

	"github.com/sluicemedia/sluice/packager/hls"
	"github.com/sluicemedia/sluice/packager/segment"
	"github.com/sluicemedia/sluice/packager/segment/segtest"
)

// fixture is segtest's Fixture with the hls handler.
type fixture = segtest.For[*hls.Handler]

func newFixture(t testing.TB, opts hls.Options) *fixture {
	t.Helper()
	return newFixtureWith(t, opts, segtest.FixtureOptions{Window: opts.Window, Wall: segtest.Wall, Now: segtest.Wall, Base: "/hls/p1/p1/"})
}

// newFixtureWith is newFixture with the fixture's options o.
func newFixtureWith(t testing.TB, opts hls.Options, o segtest.FixtureOptions) *fixture {
	t.Helper()
	return segtest.NewFor(t, o, func(st *segment.Store) *hls.Handler { return hls.New(st, opts) })
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
