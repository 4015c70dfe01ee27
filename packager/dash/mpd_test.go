package dash_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Eyevinn/mp4ff/mp4"

	"github.com/sluicemedia/sluice/packager/dash"
	"github.com/sluicemedia/sluice/packager/segment"
	"github.com/sluicemedia/sluice/packager/segment/segtest"
)

func TestWarmUp(t *testing.T) {
	f := newFixture(t, dash.Options{Live: segment.Live{ID: "p1", InitialSegments: 4}})
	f.Feed(t, 6500*time.Millisecond) // three segments
	res, body := f.Get(t, http.MethodGet, "index.mpd")
	var e struct {
		Success bool
		Error   struct{ Code, Message string }
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || res.StatusCode != http.StatusNotFound {
		t.Fatalf("%d %q: %v", res.StatusCode, body, err)
	}
	if e.Success || e.Error.Code != "NOT_FOUND" || e.Error.Message != "player p1 is warming up: 3 of 4 segments ready" {
		t.Errorf("body %s", body)
	}
	f.Feed(t, 2*time.Second)
	f.GetOK(t, "index.mpd")
}

func TestManifestText(t *testing.T) {
	f := newFixture(t, dash.Options{Live: segment.Live{ID: "p1", FragmentSize: 2 * time.Second, LiveSyncCount: 4, Window: 30 * time.Second}})
	f.Feed(t, 8500*time.Millisecond)
	want := `<?xml version="1.0" encoding="UTF-8"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-live:2011" type="dynamic" availabilityStartTime="2026-03-01T12:00:00.000Z" publishTime="2026-03-01T12:01:00.000Z" minimumUpdatePeriod="PT2S" timeShiftBufferDepth="PT30S" suggestedPresentationDelay="PT8S" minBufferTime="PT2S" maxSegmentDuration="PT2S">
  <Period id="p0" start="PT0S">
    <AdaptationSet id="0" contentType="video" mimeType="video/mp4" segmentAlignment="true" startWithSAP="1">
      <SegmentTemplate timescale="90000" presentationTimeOffset="900000" initialization="dash_ID_1_0_init.mp4" media="dash_ID_0_0_$Time$.m4s">
        <SegmentTimeline>
          <S t="900000" d="180000" r="3"/>
        </SegmentTimeline>
      </SegmentTemplate>
      <Representation id="v0" codecs="avc1.64000D" bandwidth="204448" width="320" height="240" sar="1:1" frameRate="25"/>
    </AdaptationSet>
    <AdaptationSet id="1" contentType="audio" mimeType="audio/mp4" segmentAlignment="true" startWithSAP="1">
      <SegmentTemplate timescale="48000" presentationTimeOffset="480000" initialization="dash_ID_1_1_init.mp4" media="dash_ID_0_1_$Time$.m4s">
        <SegmentTimeline>
          <S t="484096" d="96256" r="1"/>
          <S d="95232"/>
          <S d="96256"/>
        </SegmentTimeline>
      </SegmentTemplate>
      <Representation id="a1" codecs="mp4a.40.2" bandwidth="40948" audioSamplingRate="48000">
        <AudioChannelConfiguration schemeIdUri="urn:mpeg:dash:23003:3:audio_channel_configuration:2011" value="2"/>
      </Representation>
    </AdaptationSet>
  </Period>
  <UTCTiming schemeIdUri="urn:mpeg:dash:utc:http-iso:2014" value="http://media.example/hls/p1/p1/time"/>
</MPD>
`
	if got := f.GetOK(t, "index.mpd"); got != strings.ReplaceAll(want, "ID", f.Store.ID()) {
		t.Errorf("manifest:\n%s\nwant:\n%s", got, want)
	}
}

// TestPeriods: an input gap opens a new Period with its own timeline, starting after the
// first by the media played plus the gap; once the first timeline leaves the window, its
// Period goes.
func TestPeriods(t *testing.T) {
	f := newFixture(t, dash.Options{Live: segment.Live{ID: "p1", Window: 10 * time.Second}})
	f.Feed(t, 8*time.Second)
	f.Src.Restart(3 * time.Second)
	f.Feed(t, 6500*time.Millisecond)
	m := parseMPD(t, f.GetOK(t, "index.mpd"))
	if len(m.Periods) != 2 || m.Periods[0].ID != "p0" || m.Periods[1].ID != "p1" {
		t.Fatalf("periods %+v", m.Periods)
	}
	// The second timeline starts 8 s (media) + 3 s (gap) after the first.
	if m.Periods[0].Start != "PT0S" || m.Periods[1].Start != "PT11S" {
		t.Errorf("starts %s %s", m.Periods[0].Start, m.Periods[1].Start)
	}
	// Each timeline has its own origin (10 s, shifted) kept while segments slide out: the
	// first Period lists its segments from 4 s on.
	for p, first := range []int64{1260000, 900000} {
		v := m.Periods[p].Sets[0].Template
		if v.PTO != 900000 || m.times(p, 0)[0] != first {
			t.Errorf("period %d: PTO %d, first t %d", p, v.PTO, m.times(p, 0)[0])
		}
	}
	f.Feed(t, 10*time.Second)
	m = parseMPD(t, f.GetOK(t, "index.mpd"))
	if len(m.Periods) != 1 || m.Periods[0].ID != "p1" || m.Periods[0].Start != "PT11S" {
		t.Errorf("after sliding out: %+v", m.Periods)
	}
}

// TestPeriodNames: a source that restarts its clock after a gap repeats its times; each
// Period's segments still have their own names.
func TestPeriodNames(t *testing.T) {
	f := newFixture(t, dash.Options{Live: segment.Live{ID: "p1"}})
	f.Feed(t, 6500*time.Millisecond)
	f.Src.Restart(time.Second)
	f.Feed(t, 4500*time.Millisecond)
	m := parseMPD(t, f.GetOK(t, "index.mpd"))
	if len(m.Periods) != 2 {
		t.Fatalf("%d periods", len(m.Periods))
	}
	var seqs []uint32
	for p := range m.Periods {
		tm := m.times(p, 0)[0]
		if tm != 900000 {
			t.Fatalf("period %d starts at %d", p, tm)
		}
		tpl := m.Periods[p].Sets[0].Template
		_, init := f.Get(t, http.MethodGet, tpl.Init)
		_, body := f.Get(t, http.MethodGet, strings.ReplaceAll(tpl.Media, "$Time$", itoa(tm)))
		file, err := mp4.DecodeFile(bytes.NewReader([]byte(init + body)))
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, file.Segments[0].Fragments[0].Moof.Mfhd.SequenceNumber)
	}
	// Segment 0 opens the first Period; segment 4 (after the one the gap closed) the second.
	if seqs[0] != 1 || seqs[1] != 5 {
		t.Errorf("fragment sequence numbers %v, want [1 5]", seqs)
	}
}

// TestSegmentsFromManifest fetches every file the manifest names and checks each is a
// single-track fragment whose tfdt is its $Time$.
func TestSegmentsFromManifest(t *testing.T) {
	f := newFixture(t, dash.Options{Live: segment.Live{ID: "p1"}})
	f.Feed(t, 10500*time.Millisecond)
	m := parseMPD(t, f.GetOK(t, "index.mpd"))
	for set, as := range m.Periods[0].Sets {
		res, init := f.Get(t, http.MethodGet, as.Template.Init)
		if res.StatusCode != http.StatusOK || res.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
			t.Fatalf("%s: %d", as.Template.Init, res.StatusCode)
		}
		for _, tm := range m.times(0, set) {
			name := strings.ReplaceAll(as.Template.Media, "$Time$", itoa(tm))
			res, body := f.Get(t, http.MethodGet, name)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("%s: %d %s", name, res.StatusCode, body)
			}
			file, err := mp4.DecodeFile(bytes.NewReader([]byte(init + body)))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			moof := file.Segments[0].Fragments[0].Moof
			if len(moof.Trafs) != 1 || moof.Traf.Tfdt.BaseMediaDecodeTime() != uint64(tm) {
				t.Errorf("%s: %d trafs, tfdt %d", name, len(moof.Trafs), moof.Traf.Tfdt.BaseMediaDecodeTime())
			}
			if ct := res.Header.Get("Content-Type"); ct != "video/mp4" && ct != "audio/mp4" {
				t.Errorf("%s: type %s", name, ct)
			}
		}
	}
	// Range request inside a segment (header and shared bytes joined).
	name := strings.ReplaceAll(m.Periods[0].Sets[0].Template.Media, "$Time$", itoa(m.times(0, 0)[1]))
	_, whole := f.Get(t, http.MethodGet, name)
	res, part := f.Get(t, http.MethodGet, name, "Range", "bytes=100-4099")
	if res.StatusCode != http.StatusPartialContent || part != whole[100:4100] {
		t.Errorf("range: %d, %d bytes", res.StatusCode, len(part))
	}
}

func TestTimeAndHeaders(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 5, 250e6, time.UTC)
	f := newFixture(t, dash.Options{Live: segment.Live{ID: "p1"}, Now: func() time.Time { return now }})
	f.Feed(t, 6500*time.Millisecond)
	res, body := f.Get(t, http.MethodGet, "time")
	if res.StatusCode != http.StatusOK || body != "2026-03-01T12:00:05.250Z" || res.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("time: %d %q", res.StatusCode, body)
	}
	res, body = f.Get(t, http.MethodGet, "index.mpd", "X-Forwarded-Proto", "https")
	h := res.Header
	if h.Get("Content-Type") != "application/dash+xml" || h.Get("Cache-Control") != "public, max-age=1, s-maxage=1" || h.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("manifest headers %v", h)
	}
	if m := parseMPD(t, body); m.UTCTiming.Value != "https://media.example/hls/p1/p1/time" || m.Type != "dynamic" {
		t.Errorf("UTCTiming %+v", m.UTCTiming)
	}
	res, _ = f.Get(t, http.MethodOptions, "index.mpd")
	if res.StatusCode != http.StatusNoContent {
		t.Errorf("preflight %d", res.StatusCode)
	}
	id := f.Store.ID()
	for _, name := range []string{"dash_" + id + "_1_0_1.m4s", "dash_" + id + "_1_5_init.mp4", "dash_" + id + "_2_0_init.mp4",
		"dash_x_1_0_init.mp4", "dash_" + id + "_a_0_init.mp4", "dash_" + id + "_1_0_900000.mp4", "dash_", "other"} {
		if res, _ := f.Get(t, http.MethodGet, name); res.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d", name, res.StatusCode)
		}
	}
	for name, want := range map[string]bool{"index.mpd": true, "time": true, "dash_x": true, "index.m3u8": false, "seg_1.m4s": false} {
		if f.H.Owns(name) != want {
			t.Errorf("Owns(%q) = %v", name, !want)
		}
	}
}

func itoa(v int64) string { return strconvFormat(v) }

// TestPresentationDelayLongGOP: a source whose key frames come every 10 s (an encoder's
// -g 250 at 25 fps) makes 10 s segments whatever the fragment size. A client starts at the
// edge minus suggestedPresentationDelay; live_sync_duration_count × dash_fragment_size (8 s)
// put that start inside the segment still being made, so there was nothing to fetch: the
// delay is at least two of the longest segments, so the segment it starts in is complete.
func TestPresentationDelayLongGOP(t *testing.T) {
	opts := dash.Options{Live: segment.Live{ID: "p1", FragmentSize: 2 * time.Second, LiveSyncCount: 4, Window: 60 * time.Second}}
	o := segtest.FixtureOptions{Window: opts.Window, Wall: segtest.Wall, Now: segtest.Wall.Add(time.Minute), Base: "http://media.example/hls/p1/p1/", Rate: 250}
	f := segtest.NewFor(t, o, func(st *segment.Store) *dash.Handler { return dash.New(st, opts) })
	f.Feed(t, 41*time.Second)
	body := f.GetOK(t, "index.mpd")
	for _, want := range []string{`maxSegmentDuration="PT10S"`, `suggestedPresentationDelay="PT20S"`} {
		if !strings.Contains(body, want) {
			t.Errorf("MPD lacks %s:\n%s", want, body)
		}
	}
	// A usual GOP keeps the delay the settings give.
	g := newFixture(t, opts)
	g.Feed(t, 9*time.Second)
	if body := g.GetOK(t, "index.mpd"); !strings.Contains(body, `suggestedPresentationDelay="PT8S"`) {
		t.Errorf("2 s GOP: delay changed:\n%s", body)
	}
}
