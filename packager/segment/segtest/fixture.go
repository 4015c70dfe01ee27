package segtest

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/packager/segment"
)

// Wall is the fixed wall-clock time the segment, HLS and DASH tests start their sources at.
var Wall = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Quiet is a logger that drops everything, for the segmenters and stores under test.
var Quiet = slog.New(slog.DiscardHandler)

// Fixture is a store fed by a synthetic source (by default 50 frames a second, a key frame
// every 50 frames, 2 s segments) and a playback handler over the store: the HLS and DASH
// handlers' tests.
type Fixture struct {
	Store *segment.Store
	Seg   *segment.Segmenter
	Src   *Source
	// Handler serves Base + file name.
	Handler http.Handler
	Base    string
}

// FixtureOptions shape a Fixture.
type FixtureOptions struct {
	Window time.Duration // the store's window
	Wall   time.Time     // when the source starts
	Now    time.Time     // the store's clock, fixed
	Base   string        // the URL prefix of requests
	// Target and PartTarget are the segmenter's; Target 0 is 2 s.
	Target, PartTarget time.Duration
	// Rate is the source's frames a second (its GOP is 50 frames); 0 is 50.
	Rate int
}

// NewFixture returns a Fixture shaped by o, whose handler handler makes over the store.
func NewFixture(t testing.TB, o FixtureOptions, handler func(*segment.Store) http.Handler) *Fixture {
	t.Helper()
	if o.Target == 0 {
		o.Target = 2 * time.Second
	}
	if o.Rate == 0 {
		o.Rate = 50
	}
	st := segment.NewStore(segment.StoreOptions{Window: o.Window, Now: func() time.Time { return o.Now }})
	sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: o.Target, PartTarget: o.PartTarget, Log: Quiet})
	src := NewSource(o.Rate, o.Wall)
	if err := sg.SetTracks(src.Tracks()); err != nil {
		t.Fatal(err)
	}
	return &Fixture{Store: st, Seg: sg, Src: src, Handler: handler(st), Base: o.Base}
}

// Feed feeds d of the source.
func (f *Fixture) Feed(t testing.TB, d time.Duration) {
	t.Helper()
	if err := f.Src.Feed(f.Seg, d); err != nil {
		t.Fatal(err)
	}
}

// FeedUntil feeds the source one unit at a time until done holds for the store's window
// (at most 10,000 units).
func (f *Fixture) FeedUntil(t testing.TB, done func(*segment.Window) bool) {
	t.Helper()
	for range 10_000 {
		if done(f.Store.Snapshot()) {
			return
		}
		if err := f.Seg.WriteUnit(f.Src.Next()); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("the store never got there")
}

// Reply is what the tests look at of a response.
type Reply struct {
	StatusCode    int
	Header        http.Header
	ContentLength int64
}

// Get serves one request for Base + name, with hdr as header name and value pairs, and
// returns the response and its body.
func (f *Fixture) Get(t testing.TB, method, name string, hdr ...string) (Reply, string) {
	t.Helper()
	req := httptest.NewRequest(method, f.Base+name, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	f.Handler.ServeHTTP(rec, req)
	res := rec.Result()
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return Reply{StatusCode: res.StatusCode, Header: res.Header, ContentLength: res.ContentLength}, string(body)
}

// GetOK serves a GET for Base + name and fails unless it is answered 200 OK; it returns the
// body (the HLS and DASH tests' manifests: index.m3u8, index.mpd).
func (f *Fixture) GetOK(t testing.TB, name string) string {
	t.Helper()
	res, body := f.Get(t, http.MethodGet, name)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %s", name, res.StatusCode, body)
	}
	return body
}

// For is a Fixture with the handler under test kept as its own type (H): the HLS and DASH
// handlers' tests reach into their handler.
type For[H http.Handler] struct {
	*Fixture
	H H
}

// NewFor is NewFixture with the handler's type kept.
func NewFor[H http.Handler](t testing.TB, o FixtureOptions, handler func(*segment.Store) H) *For[H] {
	t.Helper()
	var h H
	f := NewFixture(t, o, func(st *segment.Store) http.Handler {
		h = handler(st)
		return h
	})
	return &For[H]{Fixture: f, H: h}
}
