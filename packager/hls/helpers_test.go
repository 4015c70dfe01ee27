package hls_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
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

// fixture is a store fed by a synthetic source (2 s GOP, 2 s segments) and its handler.
type fixture struct {
	st  *segment.Store
	sg  *segment.Segmenter
	src *segtest.Source
	h   *hls.Handler
}

func newFixture(t testing.TB, opts hls.Options) *fixture {
	t.Helper()
	st := segment.NewStore(segment.StoreOptions{Window: opts.Window, Now: func() time.Time { return wall }})
	sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: 2 * time.Second, Log: quiet})
	src := segtest.NewSource(50, wall)
	if err := sg.SetTracks(src.Tracks()); err != nil {
		t.Fatal(err)
	}
	return &fixture{st: st, sg: sg, src: src, h: hls.New(st, opts)}
}

func (f *fixture) feed(t testing.TB, d time.Duration) {
	t.Helper()
	if err := f.src.Feed(f.sg, d); err != nil {
		t.Fatal(err)
	}
}

// get serves one request and returns the response and its body.
func (f *fixture) get(t testing.TB, method, name string, hdr ...string) (reply, string) {
	t.Helper()
	req := httptest.NewRequest(method, "/hls/p1/p1/"+name, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	res := rec.Result()
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return reply{StatusCode: res.StatusCode, Header: res.Header, ContentLength: res.ContentLength}, string(body)
}

// reply is what the tests look at of a response.
type reply struct {
	StatusCode    int
	Header        http.Header
	ContentLength int64
}

// playlist fetches index.m3u8 and fails unless it is served.
func (f *fixture) playlist(t *testing.T) string {
	t.Helper()
	res, body := f.get(t, http.MethodGet, "index.m3u8")
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
