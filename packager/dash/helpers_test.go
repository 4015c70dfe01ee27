package dash_test

import (
	"encoding/xml"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/packager/dash"
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
	h   *dash.Handler
}

func newFixture(t testing.TB, opts dash.Options) *fixture {
	t.Helper()
	st := segment.NewStore(segment.StoreOptions{Window: opts.Window, Now: func() time.Time { return wall.Add(time.Minute) }})
	sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: 2 * time.Second, Log: quiet})
	src := segtest.NewSource(50, wall)
	if err := sg.SetTracks(src.Tracks()); err != nil {
		t.Fatal(err)
	}
	return &fixture{st: st, sg: sg, src: src, h: dash.New(st, opts)}
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
	req := httptest.NewRequest(method, "http://media.example/hls/p1/p1/"+name, nil)
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

// manifest fetches index.mpd and fails unless it is served.
func (f *fixture) manifest(t *testing.T) string {
	t.Helper()
	res, body := f.get(t, http.MethodGet, "index.mpd")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("manifest: %d %s", res.StatusCode, body)
	}
	return body
}

// mpd is the part of the MPD schema the tests read.
type mpd struct {
	Type    string `xml:"type,attr"`
	AST     string `xml:"availabilityStartTime,attr"`
	Periods []struct {
		ID    string `xml:"id,attr"`
		Start string `xml:"start,attr"`
		Sets  []struct {
			ContentType string `xml:"contentType,attr"`
			Template    struct {
				Timescale int64  `xml:"timescale,attr"`
				PTO       int64  `xml:"presentationTimeOffset,attr"`
				Init      string `xml:"initialization,attr"`
				Media     string `xml:"media,attr"`
				S         []struct {
					T *int64 `xml:"t,attr"`
					D int64  `xml:"d,attr"`
					R int    `xml:"r,attr"`
				} `xml:"SegmentTimeline>S"`
			} `xml:"SegmentTemplate"`
			Reps []struct {
				ID     string `xml:"id,attr"`
				Codecs string `xml:"codecs,attr"`
			} `xml:"Representation"`
		} `xml:"AdaptationSet"`
	} `xml:"Period"`
	UTCTiming struct {
		Scheme string `xml:"schemeIdUri,attr"`
		Value  string `xml:"value,attr"`
	}
}

func parseMPD(t *testing.T, body string) mpd {
	t.Helper()
	var m mpd
	if err := xml.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("MPD: %v\n%s", err, body)
	}
	return m
}

// times expands a SegmentTimeline into segment start times.
func (m mpd) times(period, set int) []int64 {
	var out []int64
	var next int64
	for _, s := range m.Periods[period].Sets[set].Template.S {
		if s.T != nil {
			next = *s.T
		}
		for range s.R + 1 {
			out = append(out, next)
			next += s.D
		}
	}
	return out
}

func strconvFormat(v int64) string { return strconv.FormatInt(v, 10) }
