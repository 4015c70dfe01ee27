package dash_test

import (
	"encoding/xml"
	"strconv"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/packager/dash"
	"github.com/sluicemedia/sluice/packager/segment"
	"github.com/sluicemedia/sluice/packager/segment/segtest"
)

// fixture is segtest's Fixture with the dash handler.
type fixture = segtest.For[*dash.Handler]

func newFixture(t testing.TB, opts dash.Options) *fixture {
	t.Helper()
	o := segtest.FixtureOptions{Window: opts.Window, Wall: segtest.Wall, Now: segtest.Wall.Add(time.Minute), Base: "http://media.example/hls/p1/p1/"}
	return segtest.NewFor(t, o, func(st *segment.Store) *dash.Handler { return dash.New(st, opts) })
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
