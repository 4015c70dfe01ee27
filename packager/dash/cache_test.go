package dash_test

import (
	"testing"
	"time"

	"github.com/sluicemedia/sluice/packager/dash"
	"github.com/sluicemedia/sluice/packager/segment"
	"github.com/sluicemedia/sluice/packager/segment/segtest"
)

// TestManifestCacheDoesNotPinSegments: once the store lets a segment go, the manifest the
// handler keeps rendered does not keep it alive.
func TestManifestCacheDoesNotPinSegments(t *testing.T) {
	f := newFixture(t, dash.Options{Live: segment.Live{ID: "p1", InitialSegments: 1, Window: 4 * time.Second}})
	segtest.CheckCacheDoesNotPin(t, f.Fixture, "index.mpd")
}
