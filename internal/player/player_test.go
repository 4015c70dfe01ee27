package player_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/console"
	"github.com/sluicemedia/sluice/internal/player"
	"github.com/sluicemedia/sluice/packager/segment/segtest"
)

func get(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading the body: %v", url, err)
	}
	return resp.StatusCode, string(b)
}

// feed cuts 7 s of a 1 s GOP H.264 + AAC source into every store of p.
func feed(t *testing.T, p *player.Player) {
	t.Helper()
	for _, sg := range p.Segmenters() {
		src := segtest.NewSource(25, time.Now())
		if err := sg.SetTracks(src.Tracks()); err != nil {
			t.Fatal(err)
		}
		if err := src.Feed(sg, 7*time.Second); err != nil {
			t.Fatal(err)
		}
	}
}

func newPlayer(t *testing.T, o player.Options) *player.Player {
	t.Helper()
	site, err := console.New()
	if err != nil {
		t.Fatal(err)
	}
	o.Site = site
	return player.New(o)
}

func TestStoresShareWhenSizesAreEqual(t *testing.T) {
	t.Parallel()
	one := player.Format{FragmentSize: time.Second, Window: 10 * time.Second}
	two := player.Format{FragmentSize: 2 * time.Second, Window: 10 * time.Second}
	if n := len(newPlayer(t, player.Options{ID: "a", HLS: one, DASH: one}).Stores()); n != 1 {
		t.Errorf("equal fragment sizes: %d stores, want 1", n)
	}
	p := newPlayer(t, player.Options{ID: "b", HLS: one, DASH: two})
	if st := p.Stores(); len(st) != 2 || st[0] != p.HLSStore() {
		t.Errorf("different fragment sizes: %d stores (HLS first: %v), want 2 with HLS first", len(st), len(st) > 0 && st[0] == p.HLSStore())
	}
}

// TestServes serves a player through the main port's router on a loopback server: its
// playlist, manifest and segments, the watch page and its redirect, the 404s, and the
// counters of what was served.
func TestServes(t *testing.T) {
	t.Parallel()
	f := player.Format{FragmentSize: time.Second, Window: 5 * time.Second}
	p := newPlayer(t, player.Options{ID: "p1", Name: "first", InitialSegments: 1, LiveSyncCount: 1, HLS: f, DASH: f})
	feed(t, p)
	rt := player.NewRouter()
	rt.Set("p1", p)
	srv := httptest.NewServer(rt)
	t.Cleanup(srv.Close)
	c := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	code, body := get(t, c, srv.URL+"/hls/p1/p1/index.m3u8")
	if code != http.StatusOK || !strings.HasPrefix(body, "#EXTM3U") {
		t.Fatalf("playlist: %d %q", code, body)
	}
	var seg string
	for _, l := range strings.Split(body, "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			seg = l
			break
		}
	}
	if seg == "" {
		t.Fatalf("playlist lists no segment:\n%s", body)
	}
	code, media := get(t, c, srv.URL+"/hls/p1/p1/"+seg)
	if code != http.StatusOK || len(media) == 0 {
		t.Fatalf("segment %s: %d, %d bytes", seg, code, len(media))
	}
	if code, body = get(t, c, srv.URL+"/hls/p1/p1/index.mpd"); code != http.StatusOK || !strings.Contains(body, "<MPD") {
		t.Fatalf("manifest: %d %q", code, body)
	}
	if code, body = get(t, c, srv.URL+"/hls/p1/"); code != http.StatusOK || !strings.Contains(body, "first") {
		t.Fatalf("watch page: %d %q", code, body)
	}
	resp, err := c.Get(srv.URL + "/hls/p1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusMovedPermanently || loc != "/hls/p1/" {
		t.Errorf("/hls/p1: %d to %q, want 301 to /hls/p1/", resp.StatusCode, loc)
	}
	before := p.Counters().Served()
	for _, u := range []string{"/hls/p1/p1/nothing.txt", "/hls/p1/other/index.m3u8", "/hls/p2/p2/index.m3u8"} {
		if code, _ := get(t, c, srv.URL+u); code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", u, code)
		}
	}
	if p.Counters().Served() == before {
		t.Error("the 404 bodies of the player's own paths were not counted")
	}
	if n := p.Counters().Playlists(); n != 3 {
		t.Errorf("playlist requests: %d, want 3 (index.m3u8, index.mpd, other/index.m3u8)", n)
	}
	if n := p.Counters().Served(); n < int64(len(media)) {
		t.Errorf("bytes served: %d, fewer than the segment's %d", n, len(media))
	}

	rt.Set("p1", nil)
	if code, _ := get(t, c, srv.URL+"/hls/p1/p1/index.m3u8"); code != http.StatusNotFound {
		t.Errorf("removed player: %d, want 404", code)
	}
}
