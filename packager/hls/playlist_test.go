package hls_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
	"github.com/sluicemedia/sluice/packager/hls"
	"github.com/sluicemedia/sluice/packager/segment"
)

func TestWarmUp(t *testing.T) {
	f := newFixture(t, hls.Options{Live: segment.Live{ID: "p1", InitialSegments: 3}})
	f.Feed(t, 4500*time.Millisecond) // two segments
	res, body := f.Get(t, http.MethodGet, "index.m3u8")
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("status %d", res.StatusCode)
	}
	var e struct {
		Success bool
		Error   struct{ Code, Message string }
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("body %q: %v", body, err)
	}
	if e.Success || e.Error.Code != "NOT_FOUND" || e.Error.Message != "player p1 is warming up: 2 of 3 segments ready" {
		t.Errorf("body %s", body)
	}
	if res.Header.Get("Access-Control-Allow-Origin") != "*" || res.Header.Get("Content-Type") != "application/json" {
		t.Errorf("headers %v", res.Header)
	}
	f.Feed(t, 2*time.Second)
	f.GetOK(t, "index.m3u8")
}

func TestPlaylistText(t *testing.T) {
	f := newFixture(t, hls.Options{Live: segment.Live{ID: "p1", InitialSegments: 3, LiveSyncCount: 4, FragmentSize: 2 * time.Second}})
	f.Feed(t, 8500*time.Millisecond)
	id := f.Store.ID()
	want := `#EXTM3U
#EXT-X-VERSION:7
#EXT-X-TARGETDURATION:2
#EXT-X-MEDIA-SEQUENCE:0
#EXT-X-DISCONTINUITY-SEQUENCE:0
#EXT-X-INDEPENDENT-SEGMENTS
#EXT-X-START:TIME-OFFSET=-8.000,PRECISE=NO
#EXT-X-MAP:URI="init_ID_1.mp4"
#EXT-X-PROGRAM-DATE-TIME:2026-03-01T12:00:00.000Z
#EXTINF:2.000,
seg_ID_0.m4s
#EXT-X-PROGRAM-DATE-TIME:2026-03-01T12:00:02.000Z
#EXTINF:2.000,
seg_ID_1.m4s
#EXT-X-PROGRAM-DATE-TIME:2026-03-01T12:00:04.000Z
#EXTINF:2.000,
seg_ID_2.m4s
#EXT-X-PROGRAM-DATE-TIME:2026-03-01T12:00:06.000Z
#EXTINF:2.000,
seg_ID_3.m4s
`
	if got := f.GetOK(t, "index.m3u8"); got != strings.ReplaceAll(want, "ID", id) {
		t.Errorf("playlist:\n%s\nwant:\n%s", got, want)
	}
}

// TestWindow checks the playlist lists hls_fragment_length of media, and the media sequence
// follows.
func TestWindow(t *testing.T) {
	f := newFixture(t, hls.Options{Live: segment.Live{ID: "p1", Window: 10 * time.Second}})
	f.Feed(t, 40500*time.Millisecond)
	pl := f.GetOK(t, "index.m3u8")
	if n := len(lines(pl, "#EXTINF:")); n != 5 {
		t.Errorf("%d segments listed, want 5", n)
	}
	if got := lines(pl, "#EXT-X-MEDIA-SEQUENCE:"); got[0] != "#EXT-X-MEDIA-SEQUENCE:15" {
		t.Errorf("%v", got)
	}
	// Segments just out of the playlist are still served (grace), older ones are gone.
	if res, _ := f.Get(t, http.MethodGet, "seg_"+f.Store.ID()+"_13.m4s"); res.StatusCode != http.StatusOK {
		t.Errorf("grace segment: %d", res.StatusCode)
	}
	if res, _ := f.Get(t, http.MethodGet, "seg_"+f.Store.ID()+"_12.m4s"); res.StatusCode != http.StatusNotFound {
		t.Errorf("old segment: %d", res.StatusCode)
	}
}

// TestDiscontinuity: one EXT-X-DISCONTINUITY while the gap is inside the playlist, then the
// discontinuity sequence takes it over once the segment before the gap slides out.
func TestDiscontinuity(t *testing.T) {
	f := newFixture(t, hls.Options{Live: segment.Live{ID: "p1", Window: 10 * time.Second}})
	f.Feed(t, 8*time.Second) // segments 0..2, and 3 open (the key frame at 8 s is not sent)
	f.Src.Restart(3 * time.Second)
	f.Feed(t, 4500*time.Millisecond) // the gap closes 3; 4 and 5 follow it
	pl := f.GetOK(t, "index.m3u8")
	if n := strings.Count(pl, "#EXT-X-DISCONTINUITY\n"); n != 1 {
		t.Errorf("%d discontinuity tags, want 1:\n%s", n, pl)
	}
	if !strings.Contains(pl, "#EXT-X-DISCONTINUITY-SEQUENCE:0\n") {
		t.Errorf("sequence:\n%s", pl)
	}
	// The tag stands right before the first segment after the gap, with its date.
	i := strings.Index(pl, "#EXT-X-DISCONTINUITY\n")
	if !strings.HasPrefix(pl[i:], "#EXT-X-DISCONTINUITY\n#EXT-X-PROGRAM-DATE-TIME:2026-03-01T12:00:11.000Z\n#EXTINF:2.000,\nseg_"+f.Store.ID()+"_4.m4s") {
		t.Errorf("after the gap:\n%s", pl[i:])
	}
	f.Feed(t, 12*time.Second)
	pl = f.GetOK(t, "index.m3u8")
	if strings.Contains(pl, "#EXT-X-DISCONTINUITY\n") || !strings.Contains(pl, "#EXT-X-DISCONTINUITY-SEQUENCE:1\n") {
		t.Errorf("after sliding out:\n%s", pl)
	}
}

// TestTracksChange: a new init segment gets its own EXT-X-MAP after the discontinuity.
func TestTracksChange(t *testing.T) {
	f := newFixture(t, hls.Options{Live: segment.Live{ID: "p1"}})
	f.Feed(t, 6500*time.Millisecond)
	f.Src.Video = mediatest.H265(f.Src.Video.ID)
	f.Src.Restart(time.Second)
	if err := f.Seg.SetTracks(f.Src.Tracks()); err != nil {
		t.Fatal(err)
	}
	f.Feed(t, 4500*time.Millisecond)
	pl := f.GetOK(t, "index.m3u8")
	id := f.Store.ID()
	maps := lines(pl, "#EXT-X-MAP:")
	if len(maps) != 2 || maps[0] != `#EXT-X-MAP:URI="init_`+id+`_1.mp4"` || maps[1] != `#EXT-X-MAP:URI="init_`+id+`_2.mp4"` {
		t.Fatalf("maps %v", maps)
	}
	if !strings.Contains(pl, "#EXT-X-DISCONTINUITY\n#EXT-X-MAP:URI=\"init_"+id+"_2.mp4\"\n") {
		t.Errorf("map not after the discontinuity:\n%s", pl)
	}
	for _, v := range []string{"1", "2"} {
		if res, _ := f.Get(t, http.MethodGet, "init_"+id+"_"+v+".mp4"); res.StatusCode != http.StatusOK {
			t.Errorf("init %s: %d", v, res.StatusCode)
		}
	}
}

// TestBlockingReload: a playlist request for a segment not yet made waits for it.
func TestBlockingReload(t *testing.T) {
	f := newFixture(t, hls.Options{Live: segment.Live{ID: "p1", InitialSegments: 1, WaitTimeout: time.Minute}})
	f.Feed(t, 4500*time.Millisecond) // segments 0, 1
	done := make(chan string, 1)
	go func() {
		_, body := f.Get(t, http.MethodGet, "index.m3u8?_HLS_msn=2")
		done <- body
	}()
	select {
	case <-done:
		t.Fatal("answered before segment 2")
	case <-time.After(200 * time.Millisecond):
	}
	f.Feed(t, 2*time.Second)
	select {
	case body := <-done:
		if !strings.Contains(body, "seg_"+f.Store.ID()+"_2.m4s") {
			t.Errorf("playlist without segment 2:\n%s", body)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("blocking reload not answered")
	}
}

// TestStartTag (issue 19): EXT-X-START is a playlist tag, once, before the first segment's
// tags (RFC 8216 4.3.5.2), and its offset keeps three target durations from the live end
// whatever live_sync_duration_count and the fragment size say.
func TestStartTag(t *testing.T) {
	for _, tc := range []struct {
		sync     int
		fragment time.Duration
		want     string // the segments last 2 s: the target is 2
	}{
		{4, 2 * time.Second, "-8.000"},
		{1, 2 * time.Second, "-6.000"},
		{4, time.Second, "-6.000"}, // segments longer than the fragment size (the GOP)
		{10, 3 * time.Second, "-30.000"},
	} {
		f := newFixture(t, hls.Options{Live: segment.Live{ID: "p1", InitialSegments: 3, LiveSyncCount: tc.sync, FragmentSize: tc.fragment}})
		f.Feed(t, 8500*time.Millisecond)
		pl := f.GetOK(t, "index.m3u8")
		starts := lines(pl, "#EXT-X-START:")
		if len(starts) != 1 {
			t.Fatalf("%d EXT-X-START tags:\n%s", len(starts), pl)
		}
		at := strings.Index(pl, "#EXT-X-START:")
		for _, seg := range []string{"#EXT-X-MAP:", "#EXTINF:", "#EXT-X-PROGRAM-DATE-TIME:", "#EXT-X-DISCONTINUITY\n"} {
			if i := strings.Index(pl, seg); i >= 0 && i < at {
				t.Errorf("EXT-X-START after %s:\n%s", seg, pl)
			}
		}
		target, err := strconv.Atoi(strings.TrimPrefix(lines(pl, "#EXT-X-TARGETDURATION:")[0], "#EXT-X-TARGETDURATION:"))
		if err != nil || target != 2 {
			t.Fatalf("target %d (%v)", target, err)
		}
		want := "#EXT-X-START:TIME-OFFSET=" + tc.want + ",PRECISE=NO"
		off, _ := strconv.ParseFloat(tc.want, 64)
		if starts[0] != want || -off < 3*float64(target) {
			t.Errorf("sync %d × %v: %s, want %s (at least three targets of %d s)", tc.sync, tc.fragment, starts[0], want, target)
		}
	}
}

// TestClassicHasNoLowLatencyTags (issue 16): a classic player's playlist, plain or answered to
// a blocking reload, carries none of the Low-Latency HLS tags, so players that do not know
// them see what they saw before.
func TestClassicHasNoLowLatencyTags(t *testing.T) {
	f := newFixture(t, hls.Options{Live: segment.Live{ID: "p1", InitialSegments: 1}})
	f.Feed(t, 6500*time.Millisecond)
	_, reload := f.Get(t, http.MethodGet, "index.m3u8?_HLS_msn=1")
	for _, body := range []string{f.GetOK(t, "index.m3u8"), reload} {
		if !strings.Contains(body, "#EXTINF:") {
			t.Fatalf("not a playlist:\n%s", body)
		}
		for _, tag := range []string{"#EXT-X-PART", "#EXT-X-PART-INF", "#EXT-X-SERVER-CONTROL", "#EXT-X-PRELOAD-HINT", "#EXT-X-SKIP", "#EXT-X-RENDITION-REPORT"} {
			if got := lines(body, tag); len(got) != 0 {
				t.Errorf("classic playlist has %v", got)
			}
		}
	}
}

// TestBlockingReloadLimits: a request more than two segments past the newest is answered 400
// at once (RFC 8216bis 6.2.5.2); blocked requests are capped per player, the one over the cap
// answered 503 at once, and every blocked request lets go of its place when answered.
func TestBlockingReloadLimits(t *testing.T) {
	f := newFixture(t, hls.Options{Live: segment.Live{ID: "p1", InitialSegments: 1, WaitTimeout: time.Minute, MaxWaiting: 2}})
	f.Feed(t, 4500*time.Millisecond) // segments 0, 1
	if res, body := f.Get(t, http.MethodGet, "index.m3u8?_HLS_msn=4"); res.StatusCode != http.StatusBadRequest {
		t.Fatalf("msn 4 with newest 1: %d %s", res.StatusCode, body)
	}
	if res, body := f.Get(t, http.MethodGet, "index.m3u8?_HLS_msn=1"); res.StatusCode != http.StatusOK || f.H.Blocked() != 0 {
		t.Fatalf("msn of an existing segment: %d %s, blocked %d", res.StatusCode, body, f.H.Blocked())
	}
	done := make(chan int, 2)
	for range 2 {
		go func() {
			res, _ := f.Get(t, http.MethodGet, "index.m3u8?_HLS_msn=3")
			done <- res.StatusCode
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for f.H.Blocked() != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("blocked %d, want 2", f.H.Blocked())
		}
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	res, body := f.Get(t, http.MethodGet, "index.m3u8?_HLS_msn=2")
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" || time.Since(start) > 5*time.Second {
		t.Fatalf("over the cap: %d %s %v", res.StatusCode, body, res.Header)
	}
	f.Feed(t, 4*time.Second) // segments 2, 3
	for range 2 {
		select {
		case code := <-done:
			if code != http.StatusOK {
				t.Fatalf("blocked request answered %d", code)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("blocked request not answered")
		}
	}
	if f.H.Blocked() != 0 {
		t.Fatalf("blocked %d after answers", f.H.Blocked())
	}
}
