package hls_test

import (
	"testing"
	"time"

	"github.com/sluicemedia/sluice/packager/hls"
	"github.com/sluicemedia/sluice/packager/segment"
	"github.com/sluicemedia/sluice/packager/segment/segtest"
)

// TestPlaylistCacheDoesNotPinSegments: once the store lets a segment go, the playlist the
// handler keeps rendered does not keep it alive.
func TestPlaylistCacheDoesNotPinSegments(t *testing.T) {
	f := newFixture(t, hls.Options{Live: segment.Live{ID: "p1", InitialSegments: 1, Window: 4 * time.Second}})
	segtest.CheckCacheDoesNotPin(t, f.Fixture, "index.m3u8")
}
