package dash

import (
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
)

// FuzzManifest feeds MPD text to the parser, then works out the start point and the first
// segments of every representation as a pull would: no panic, no hang, and addresses that
// resolve.
func FuzzManifest(f *testing.F) {
	for _, s := range []string{mpdTimeline, mpdNumber, mpdChoice} {
		f.Add([]byte(s), int64(7000))
	}
	fx := recorded(f, "timeline")
	f.Add(fx.file(f, "index.mpd"), int64(0))
	f.Add([]byte(`<MPD type="dynamic" availabilityStartTime="1970-01-01T00:00:00Z"><Period><AdaptationSet mimeType="video/mp4">`+
		`<SegmentTemplate duration="1" timescale="4294967295" startNumber="4294967295" media="$Number%032d$"/>`+
		`<Representation id="v"/></AdaptationSet></Period></MPD>`), int64(1e12))
	base := mustURL("http://h/a/index.mpd")
	f.Fuzz(func(t *testing.T, b []byte, afterMS int64) {
		ast := time.Date(2026, 11, 21, 16, 40, 47, 0, time.UTC)
		now := ast.Add(time.Duration(afterMS%(1<<40)) * time.Millisecond)
		m, err := parseManifest(b, base, now)
		if err != nil {
			return
		}
		p, target := startPoint(m, now)
		if p == nil || target < 0 {
			t.Fatalf("start %v in %v", target, p)
		}
		for _, k := range []media.Kind{media.KindVideo, media.KindAudio} {
			fl := &follower{kind: k, p: p, target: target}
			for q := p; q != nil; q = m.after(q) {
				r := q.rep(k)
				if r == nil {
					continue
				}
				_ = r.segDuration()
				_ = r.presentation(q)
				_, _ = r.url(r.init, 0, 0)
				for range 3 {
					nx, ok, _ := fl.next(m, q, r)
					if !ok {
						break
					}
					_, _ = r.url(r.media, nx.number, nx.t)
					fl.started, fl.lastT, fl.nextN = true, nx.t, nx.number+1
				}
				_, _ = lastNumber(q, r)
				fl.enter(q)
			}
		}
	})
}

// FuzzSegment feeds an init segment and a media segment to the fMP4 readers: no panic, no
// read outside the segment, units of the one track.
func FuzzSegment(f *testing.F) {
	for _, kind := range []string{"timeline", "h265"} {
		fx := recorded(f, kind)
		for _, stream := range []string{"0", "1"} {
			init := fx.file(f, "init-stream"+stream+".m4s")
			seg := fx.file(f, "chunk-stream"+stream+"-00001.m4s")
			f.Add(init, seg[:min(len(seg), 3000)], stream == "0")
		}
	}
	f.Add([]byte{0, 0, 0, 8, 'm', 'o', 'o', 'v'}, []byte{0, 0, 0, 8, 'm', 'o', 'o', 'f'}, true)
	f.Fuzz(func(t *testing.T, init, seg []byte, video bool) {
		kind := media.KindAudio
		if video {
			kind = media.KindVideo
		}
		ti, err := parseInit(init, kind)
		if err != nil {
			return
		}
		if ti.Track.Kind() != kind || ti.Timescale == 0 {
			t.Fatalf("track %+v", ti)
		}
		r := newRepReader(ti, 0)
		for range 2 {
			tracks, units, err := r.segment(seg)
			if err != nil {
				return
			}
			if tracks != nil && len(tracks) != 1 {
				t.Fatalf("%d tracks", len(tracks))
			}
			for _, au := range units {
				if au.Track != 0 || len(au.Payload) == 0 {
					t.Fatalf("unit %+v", au)
				}
			}
		}
	})
}

// FuzzTemplate feeds templates to expand.
func FuzzTemplate(f *testing.F) {
	for _, tc := range templateCases {
		f.Add(tc.tmpl, uint64(42), uint64(90000))
	}
	f.Fuzz(func(t *testing.T, tmpl string, n, tm uint64) {
		_, _ = expand(tmpl, tmplVars{repID: "r", bandwidth: 1, number: n, time: tm})
	})
}
