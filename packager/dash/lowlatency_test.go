package dash_test

import (
	"encoding/xml"
	"slices"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/packager/dash"
	"github.com/sluicemedia/sluice/packager/segment"
)

// llMPD is the part of the MPD the low-latency checks read.
type llMPD struct {
	Service []struct {
		Latency struct {
			Target string `xml:"target,attr"`
			Min    string `xml:"min,attr"`
			Max    string `xml:"max,attr"`
		}
		Rate struct {
			Min string `xml:"min,attr"`
			Max string `xml:"max,attr"`
		} `xml:"PlaybackRate"`
	} `xml:"ServiceDescription"`
	Update    string `xml:"minimumUpdatePeriod,attr"`
	Templates []struct {
		Offset   *string `xml:"availabilityTimeOffset,attr"`
		Complete *string `xml:"availabilityTimeComplete,attr"`
	} `xml:"Period>AdaptationSet>SegmentTemplate"`
}

func TestLowLatencyManifest(t *testing.T) {
	t.Parallel()
	var classic mpd
	for _, tc := range []struct {
		name string
		part time.Duration
	}{{"classic", 0}, {"low-latency", 250 * time.Millisecond}} {
		f := newFixture(t, dash.Options{Live: segment.Live{ID: "p1", FragmentSize: 2 * time.Second, Window: 30 * time.Second, PartTarget: tc.part}})
		f.Feed(t, 8500*time.Millisecond)
		body := f.GetOK(t, "index.mpd")
		full := parseMPD(t, body) // still a valid MPD
		if tc.part == 0 {
			classic = full
		} else {
			// Each track's timeline lists one segment more than the classic one: the next,
			// starting where the newest ends, as long as the newest (dash.js asks only for
			// listed segments).
			for set := range full.Periods[0].Sets {
				want, got := classic.times(0, set), full.times(0, set)
				ss := classic.Periods[0].Sets[set].Template.S
				next := want[len(want)-1] + ss[len(ss)-1].D
				if len(got) != len(want)+1 || !slices.Equal(got[:len(want)], want) || got[len(want)] != next {
					t.Errorf("set %d: low-latency timeline %v, want the classic %v and then %d\n%s", set, got, want, next, body)
				}
			}
		}
		var m llMPD
		if err := xml.Unmarshal([]byte(body), &m); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(m.Templates) != 2 {
			t.Fatalf("%s: %d templates\n%s", tc.name, len(m.Templates), body)
		}
		if tc.part == 0 {
			if len(m.Service) != 0 {
				t.Errorf("classic manifest has a ServiceDescription\n%s", body)
			}
			for _, tp := range m.Templates {
				if tp.Offset != nil || tp.Complete != nil {
					t.Errorf("classic manifest has availability marks\n%s", body)
				}
			}
			if m.Update != "PT2S" {
				t.Errorf("classic minimumUpdatePeriod %q, want a fragment (PT2S)", m.Update)
			}
			continue
		}
		if len(m.Service) != 1 || m.Service[0].Latency.Target != "1250" || m.Service[0].Latency.Min != "625" ||
			m.Service[0].Latency.Max != "2500" || m.Service[0].Rate.Min != "0.96" || m.Service[0].Rate.Max != "1.04" {
			t.Errorf("service description %+v\n%s", m.Service, body)
		}
		if m.Update != "PT0.25S" {
			t.Errorf("low-latency minimumUpdatePeriod %q, want a part (PT0.25S)", m.Update)
		}
		for _, tp := range m.Templates {
			if tp.Offset == nil || *tp.Offset != "1.75" || tp.Complete == nil || *tp.Complete != "false" {
				t.Errorf("template marks %v %v\n%s", tp.Offset, tp.Complete, body)
			}
		}
	}
}
