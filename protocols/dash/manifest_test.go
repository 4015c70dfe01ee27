package dash

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/protocols/internal/httpget"
	"github.com/sluicemedia/sluice/protocols/internal/pulltest"
)

// MPDs of the table tests, also the fuzz seeds. The first two are what ffmpeg 5.1 writes
// live, with a SegmentTimeline and with $Number$ from availabilityStartTime.
const (
	mpdTimeline = `<?xml version="1.0" encoding="utf-8"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-live:2011" type="dynamic"
	minimumUpdatePeriod="PT2S" suggestedPresentationDelay="PT2S" availabilityStartTime="2026-11-21T16:42:10.672Z"
	publishTime="2026-11-21T16:42:16.676Z" timeShiftBufferDepth="PT12.0S" maxSegmentDuration="PT2.0S" minBufferTime="PT4.0S">
	<Period id="0" start="PT0.0S">
		<AdaptationSet id="0" contentType="video" startWithSAP="1" segmentAlignment="true" frameRate="25/1" maxWidth="640" maxHeight="360">
			<Representation id="0" mimeType="video/mp4" codecs="avc1.42c01e" bandwidth="1000000" width="640" height="360">
				<SegmentTemplate timescale="12800" initialization="init-stream$RepresentationID$.m4s" media="chunk-stream$RepresentationID$-$Number%05d$.m4s" startNumber="1">
					<SegmentTimeline><S t="0" d="25600" r="2" /></SegmentTimeline>
				</SegmentTemplate>
			</Representation>
		</AdaptationSet>
		<AdaptationSet id="1" contentType="audio" startWithSAP="1" segmentAlignment="true">
			<Representation id="1" mimeType="audio/mp4" codecs="mp4a.40.2" bandwidth="69000" audioSamplingRate="44100">
				<SegmentTemplate timescale="44100" initialization="init-stream$RepresentationID$.m4s" media="chunk-stream$RepresentationID$-$Number%05d$.m4s" startNumber="1">
					<SegmentTimeline><S t="0" d="88064" /><S d="89088" /><S d="88064" /></SegmentTimeline>
				</SegmentTemplate>
			</Representation>
		</AdaptationSet>
	</Period>
</MPD>`
	mpdNumber = `<?xml version="1.0" encoding="utf-8"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-live:2011" type="dynamic"
	minimumUpdatePeriod="PT500S" suggestedPresentationDelay="PT2S" availabilityStartTime="2026-11-21T16:40:47.515Z"
	publishTime="2026-11-21T16:40:53.515Z" timeShiftBufferDepth="PT6.0S" maxSegmentDuration="PT2.0S" minBufferTime="PT4.0S">
	<Period id="0" start="PT0.0S">
		<AdaptationSet id="0" contentType="video" startWithSAP="1" segmentAlignment="true">
			<Representation id="0" mimeType="video/mp4" codecs="avc1.42c01e" bandwidth="1000000" width="640" height="360">
				<SegmentTemplate timescale="1000000" duration="2000000" initialization="init-stream$RepresentationID$.m4s" media="chunk-stream$RepresentationID$-$Number%05d$.m4s" startNumber="1"/>
			</Representation>
		</AdaptationSet>
		<AdaptationSet id="1" contentType="audio" startWithSAP="1" segmentAlignment="true">
			<Representation id="1" mimeType="audio/mp4" codecs="mp4a.40.2" bandwidth="69000" audioSamplingRate="44100">
				<SegmentTemplate timescale="1000000" duration="2000000" initialization="init-stream$RepresentationID$.m4s" media="chunk-stream$RepresentationID$-$Number%05d$.m4s" startNumber="1"/>
			</Representation>
		</AdaptationSet>
	</Period>
</MPD>`
	mpdChoice = `<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT8S">
	<BaseURL>http://cdn.example/live/</BaseURL>
	<Period id="p0" duration="PT4S">
		<BaseURL>p0/</BaseURL>
		<SegmentTemplate timescale="90000" initialization="$RepresentationID$/init.mp4" media="$RepresentationID$/$Time$.m4s"/>
		<AdaptationSet mimeType="video/mp4" codecs="avc1.64001f">
			<SegmentTemplate presentationTimeOffset="900"><SegmentTimeline><S t="900" d="180000" r="-1"/></SegmentTimeline></SegmentTemplate>
			<Representation id="v500" bandwidth="500000"/>
			<Representation id="v3000" bandwidth="3000000"><BaseURL>hi/</BaseURL></Representation>
			<Representation id="v1500" bandwidth="1500000"/>
			<Representation id="drm" bandwidth="9000000"><ContentProtection schemeIdUri="urn:mpeg:dash:mp4protection:2011" value="cenc"/></Representation>
			<Representation id="base" bandwidth="8000000"><SegmentBase indexRange="800-1000"/></Representation>
		</AdaptationSet>
		<AdaptationSet mimeType="video/mp4" codecs="vp09.00.10.08">
			<SegmentTemplate duration="180000" startNumber="0" media="vp9/$Number$.m4s"/>
			<Representation id="vp9" bandwidth="20000000"/>
		</AdaptationSet>
		<AdaptationSet mimeType="audio/mp4" lang="fr">
			<SegmentTemplate duration="180000" media="$RepresentationID$/$Number%03d$.m4s"/>
			<Representation id="fr" codecs="mp4a.40.2" bandwidth="256000"/>
		</AdaptationSet>
		<AdaptationSet mimeType="audio/mp4" lang="en">
			<Role schemeIdUri="urn:mpeg:dash:role:2011" value="main"/>
			<SegmentTemplate duration="180000" media="$RepresentationID$/$Number%03d$.m4s"/>
			<Representation id="en96" codecs="mp4a.40.2" bandwidth="96000"/>
			<Representation id="en128" codecs="mp4a.40.5" bandwidth="128000"/>
		</AdaptationSet>
	</Period>
	<Period id="p1">
		<AdaptationSet mimeType="audio/mp4" codecs="opus">
			<SegmentTemplate timescale="48000" duration="96000" startNumber="5" initialization="o/init.mp4" media="o/$Number$.m4s"/>
			<Representation id="opus" bandwidth="64000"/>
		</AdaptationSet>
	</Period>
</MPD>`
)

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

// TestManifestTimeline reads ffmpeg's live SegmentTimeline MPD and starts two segments back
// from the timeline's end (delay: minBufferTime 4 s).
func TestManifestTimeline(t *testing.T) {
	base := mustURL("http://h/live/index.mpd")
	ast := time.Date(2026, 11, 21, 16, 42, 10, 672e6, time.UTC)
	m, err := parseManifest([]byte(mpdTimeline), base, ast.Add(6500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if !m.dynamic || m.mup != 2*time.Second || m.spd != 2*time.Second || !m.ast.Equal(ast) || len(m.periods) != 1 {
		t.Fatalf("manifest %+v", m)
	}
	p := m.periods[0]
	if p.video == nil || p.audio == nil || len(p.video.timeline) != 3 || len(p.audio.timeline) != 3 {
		t.Fatalf("period %+v", p)
	}
	if s := p.audio.timeline[2]; s.t != 88064+89088 || s.n != 3 {
		t.Fatalf("audio segment 3: %+v", s)
	}
	sp, target := startPoint(m, ast.Add(6500*time.Millisecond))
	if sp != p || target != 2*time.Second {
		t.Fatalf("start %v in %v", target, sp)
	}
	f := &follower{p: p, target: target}
	nx, ok, _ := f.next(m, p, p.video)
	if !ok || nx.number != 2 || nx.t != 25600 {
		t.Fatalf("first video segment %+v", nx)
	}
	u, err := p.video.url(p.video.media, nx.number, nx.t)
	if err != nil || u.String() != "http://h/live/chunk-stream0-00002.m4s" {
		t.Fatalf("url %v %v", u, err)
	}
	f.started, f.lastT = true, nx.t
	if nx, ok, ended := f.next(m, p, p.video); !ok || nx.number != 3 || ended {
		t.Fatalf("next %+v %v %v", nx, ok, ended)
	}
	f.lastT = 51200
	if _, ok, ended := f.next(m, p, p.video); ok || ended {
		t.Fatal("past the live edge: want to wait for the MPD")
	}
}

// TestManifestNumber reads ffmpeg's live $Number$ MPD: the start comes from the wall clock, and
// each segment is due when it has been fully produced.
func TestManifestNumber(t *testing.T) {
	base := mustURL("http://h/live/index.mpd")
	ast := time.Date(2026, 11, 21, 16, 40, 47, 515e6, time.UTC)
	now := ast.Add(9300 * time.Millisecond)
	m, err := parseManifest([]byte(mpdNumber), base, now)
	if err != nil {
		t.Fatal(err)
	}
	p, target := startPoint(m, now)
	// Delay: 4 s (minBufferTime, two segments) within the 6 s buffer.
	if target != 5300*time.Millisecond {
		t.Fatalf("start %v", target)
	}
	f := &follower{p: p, target: target}
	nx, ok, ended := f.next(m, p, p.video)
	if !ok || ended || nx.number != 3 || !nx.avail.Equal(ast.Add(6*time.Second)) {
		t.Fatalf("first segment %+v", nx)
	}
	if last, known := lastNumber(p, p.video); known {
		t.Fatalf("live period has a last segment %d", last)
	}
}

// TestManifestChoice picks the highest video bandwidth (not protected, not SegmentBase, not
// VP9), the main audio set's highest bandwidth, resolves BaseURLs, and reads two periods.
func TestManifestChoice(t *testing.T) {
	m, err := parseManifest([]byte(mpdChoice), mustURL("http://origin/x/index.mpd"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if m.dynamic || len(m.periods) != 2 {
		t.Fatalf("manifest %+v", m)
	}
	p0, p1 := m.periods[0], m.periods[1]
	if p0.video == nil || p0.video.id != "v3000" || p0.audio == nil || p0.audio.id != "en128" {
		t.Fatalf("p0 chose %+v %+v", p0.video, p0.audio)
	}
	// r=-1 runs to the period's end: 4 s at 2 s a segment, from t=900 (presentation time 0).
	if n := len(p0.video.timeline); n != 2 || p0.video.timeline[1].t != 180900 {
		t.Fatalf("timeline %+v", p0.video.timeline)
	}
	u, err := p0.video.url(p0.video.media, 0, 180900)
	if err != nil || u.String() != "http://cdn.example/live/p0/hi/v3000/180900.m4s" {
		t.Fatalf("video url %v %v", u, err)
	}
	u, err = p0.audio.url(p0.audio.media, 7, 0)
	if err != nil || u.String() != "http://cdn.example/live/p0/en128/007.m4s" {
		t.Fatalf("audio url %v %v", u, err)
	}
	if p0.end != 4*time.Second || p1.start != 4*time.Second || p1.end != 8*time.Second || m.after(p0) != p1 || m.after(p1) != nil {
		t.Fatalf("periods %+v %+v", p0, p1)
	}
	if p1.video != nil || p1.audio == nil || p1.audio.kind != media.KindAudio {
		t.Fatalf("p1 chose %+v %+v", p1.video, p1.audio)
	}
	if last, known := lastNumber(p1, p1.audio); !known || last != 6 {
		t.Fatalf("p1 last segment %d %v", last, known)
	}
	// Media time 900 of p0 (at 90 kHz) is presentation time 0.
	if off := p0.video.presentation(p0); off != -900 {
		t.Fatalf("presentation offset %d", off)
	}
}

// TestManifestHostileXML reads documents on which dash-mpd's own XML decoder loops for ever
// (found by FuzzManifest): each must parse, or fail, at once.
func TestManifestHostileXML(t *testing.T) {
	title := strings.Replace(mpdTimeline, "<Period", "<ProgramInformation><Title>News > Sport</Title></ProgramInformation><Period", 1)
	if _, err := parseManifest([]byte(title), mustURL("http://h/i.mpd"), time.Now()); err != nil {
		t.Fatalf("'>' in a title: %v", err)
	}
	prefixed := strings.NewReplacer("<MPD ", `<mpd:MPD xmlns:mpd="urn:mpeg:dash:schema:mpd:2011" `, "</MPD>", "</mpd:MPD>").Replace(mpdNumber)
	if _, err := parseManifest([]byte(prefixed), mustURL("http://h/i.mpd"), time.Now()); err != nil {
		t.Fatalf("prefixed root: %v", err)
	}
	for _, b := range []string{
		`<MPD>/></MPD>`,
		`<!\x05<MPD00>>>>>>>AAAAA `,
		`<MPD type="static"><Period><AdaptationSet><entation id="0"></Representation></AdaptationSet></Period></MPD>`,
		`<!DOCTYPE MPD [<!ENTITY a "aaaa">]><MPD/>`,
		`<MPD/><MPD/>`,
	} {
		if _, err := parseManifest([]byte(b), mustURL("http://h/i.mpd"), time.Now()); err == nil {
			t.Errorf("%q accepted", b)
		}
	}
}

// TestManifestErrors refuses what cannot be played.
func TestManifestErrors(t *testing.T) {
	cases := map[string]string{
		"not xml":      "hello",
		"not an MPD":   "<html><body>MPD</body></html>",
		"broken xml":   `<MPD type="static"><Period>`,
		"dynamic, AST": `<MPD type="dynamic"><Period/></MPD>`,
		"nothing":      `<MPD type="static"><Period><AdaptationSet mimeType="video/mp4" codecs="av01.0.08M.08"><SegmentTemplate duration="1" media="$Number$"/><Representation id="a"/></AdaptationSet></Period></MPD>`,
	}
	for name, b := range cases {
		if _, err := parseManifest([]byte(b), mustURL("http://h/i.mpd"), time.Now()); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	_, err := parseManifest([]byte(cases["nothing"]), mustURL("http://h/i.mpd"), time.Now())
	if !errors.Is(err, errNoRepresentation) {
		t.Errorf("nothing: %v", err)
	}
}

// TestManifestLeftOut: an MPD of nothing playable says what was left out and why, so that an
// operator can tell DRM from addressing from codecs; subtitles are left out too.
func TestManifestLeftOut(t *testing.T) {
	const b = `<MPD type="static" mediaPresentationDuration="PT4S"><Period>
	<AdaptationSet mimeType="video/mp4" codecs="avc1.64001f">
		<ContentProtection schemeIdUri="urn:mpeg:dash:mp4protection:2011" value="cenc"/>
		<SegmentTemplate duration="2" media="$Number$.m4s"/>
		<Representation id="drm1" bandwidth="1"/><Representation id="drm2" bandwidth="2"/>
	</AdaptationSet>
	<AdaptationSet mimeType="video/mp4" codecs="avc1.64001f"><Representation id="base" bandwidth="3"><SegmentBase indexRange="800-1000"/></Representation></AdaptationSet>
	<AdaptationSet mimeType="audio/mp4" codecs="ac-3"><SegmentTemplate duration="2" media="$Number$.m4s"/><Representation id="ac3" bandwidth="4"/></AdaptationSet>
	<AdaptationSet mimeType="application/mp4" contentType="text" codecs="stpp"><SegmentTemplate duration="2" media="$Number$.m4s"/><Representation id="sub" bandwidth="5"/></AdaptationSet>
</Period></MPD>`
	_, err := parseManifest([]byte(b), mustURL("http://h/i.mpd"), time.Now())
	if !errors.Is(err, errNoRepresentation) {
		t.Fatalf("%v, want errNoRepresentation", err)
	}
	for _, want := range []string{"2 under content protection", "1 without usable SegmentTemplate", `1 of codecs "ac-3"`, `1 of codecs "stpp"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v: want %q in it", err, want)
		}
	}
	t.Log(err)
}

// TestRefreshFollowsLocation: a dynamic MPD with a Location (a CDN or an ad-insertion
// server's session) is reloaded from there, not from the URL first asked.
func TestRefreshFollowsLocation(t *testing.T) {
	var a pulltest.Requests
	// Relative Locations: the entry's names the session, the session's itself.
	doc := func(loc string) string {
		return strings.Replace(strings.Replace(mpdTimeline, `minimumUpdatePeriod="PT2S"`, `minimumUpdatePeriod="PT0.2S"`, 1),
			"<Period", "<Location>"+loc+"</Location><Period", 1)
	}
	srv := httptest.NewServer(a.Wrap(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/live/index.mpd" {
			_, _ = w.Write([]byte(doc("session/1/index.mpd")))
			return
		}
		_, _ = w.Write([]byte(doc("index.mpd")))
	}))
	defer srv.Close()
	entry := mustURL(srv.URL + "/live/index.mpd")
	m, err := parseManifest([]byte(doc("session/1/index.mpd")), entry, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ld := httpget.NewPullLoader(defaultConfig.Config)
	defer ld.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	newManifests(m).refresh(ctx, ld, entry, 100*time.Millisecond, slog.New(slog.DiscardHandler))
	if a.Count("/live/index.mpd") != 0 || a.Count("/live/session/1/index.mpd") < 2 {
		t.Fatalf("reloads asked for %v, want the Location only", &a)
	}
}
