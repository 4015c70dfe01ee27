package segment_test

import (
	"testing"
	"time"

	"github.com/sluicemedia/sluice/packager/segment"
)

// TestPlaylistCache: whole seconds, rounded down (a playlist is never reused longer than
// asked), and "no-cache" under a second.
func TestPlaylistCache(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "no-cache"},
		{333 * time.Millisecond, "no-cache"},
		{999 * time.Millisecond, "no-cache"},
		{time.Second, "public, max-age=1, s-maxage=1"},
		{1500 * time.Millisecond, "public, max-age=1, s-maxage=1"},
		{3 * time.Second, "public, max-age=3, s-maxage=3"},
		{18 * time.Second, "public, max-age=18, s-maxage=18"},
	} {
		if got := segment.PlaylistCache(tc.d); got != tc.want {
			t.Errorf("PlaylistCache(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
