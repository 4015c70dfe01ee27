package hls

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bluenviron/gohlslib/v2/pkg/playlist"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/protocols/internal/httpget"
	"github.com/sluicemedia/sluice/protocols/internal/ingest"
	"github.com/sluicemedia/sluice/protocols/internal/livepull"
	"github.com/sluicemedia/sluice/protocols/internal/pulltest"
)

// What origins and CDNs serve that the plain fixtures do not: redirects, odd encodings, a map
// that changes mid-playlist, an origin that restarts its media sequence.

// TestPullRedirects: a CDN sends the multivariant playlist and the media playlist elsewhere
// (302), and their relative URIs resolve against where they came from; after a while the
// media playlist's reloads go to another edge, and then the first one stops serving. The media
// playlist comes gzip-encoded, with CRLF line ends and a byte-order mark.
func TestPullRedirects(t *testing.T) {
	t.Parallel()
	f := recorded(t, "ts")
	var a pulltest.Requests
	start := time.Now()
	// Reloads go to the second edge after 1.5 s; the first serves nothing after 2.5 s.
	moved := func() bool { return time.Since(start) > 1500*time.Millisecond }
	gone := func() bool { return time.Since(start) > 2500*time.Millisecond }
	srv := httptest.NewServer(a.Wrap(func(w http.ResponseWriter, r *http.Request) {
		edge, file, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/edge/"), "/")
		switch {
		case r.URL.Path == "/master.m3u8":
			http.Redirect(w, r, "/edge/master.m3u8?token=1", http.StatusFound)
		case r.URL.Path == "/edge/master.m3u8":
			_, _ = w.Write([]byte("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=400000,CODECS=\"avc1.42c00d,mp4a.40.2\"\nvideo.m3u8\n"))
		case r.URL.Path == "/edge/video.m3u8" && moved():
			http.Redirect(w, r, "/edge/w/video.m3u8", http.StatusFound)
		case r.URL.Path == "/edge/video.m3u8":
			http.Redirect(w, r, "/edge/v/video.m3u8", http.StatusFound)
		case edge == "v" && gone(), edge != "v" && edge != "w":
			http.NotFound(w, r)
		case file == "video.m3u8":
			n := 3 + int(time.Since(start)/time.Second)
			text := "\xef\xbb\xbf" + strings.ReplaceAll(f.media(0, min(n, f.count), n >= f.count), "\n", "\r\n")
			if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
				t.Error("playlist asked for without Accept-Encoding: gzip")
			}
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			_, _ = zw.Write([]byte(text))
			_ = zw.Close()
		default:
			http.ServeFile(w, r, filepath.Join(f.dir, filepath.Base(file)))
		}
	}))
	defer srv.Close()
	pulltest.Play(t, pullURL, srv.URL+"/master.m3u8", "redirects")
	if v, w := a.Count("/edge/v/seg"), a.Count("/edge/w/seg"); v < 3 || w < 1 || v+w != f.count {
		t.Fatalf("segments asked for %d times below the first edge and %d below the second, want 3 or more and 1 or more, %d in all (asked: %v)",
			v, w, f.count, &a)
	}
}

// TestPullMapChanges plays a playlist whose EXT-X-MAP changes after a discontinuity (H.264
// fMP4, then H.265 fMP4, as when an ad is spliced in): each segment is read against its own
// init segment, and the stream ends with the H.265 track.
func TestPullMapChanges(t *testing.T) {
	t.Parallel()
	h264, h265 := recorded(t, "fmp4"), recorded(t, "fmp4-h265")
	var a pulltest.Requests
	mux := http.NewServeMux()
	mux.Handle("/a/", http.StripPrefix("/a/", http.FileServer(http.Dir(h264.dir))))
	mux.Handle("/b/", http.StripPrefix("/b/", http.FileServer(http.Dir(h265.dir))))
	mux.HandleFunc("/live.m3u8", func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		b.WriteString("#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:1\n#EXT-X-PLAYLIST-TYPE:VOD\n")
		b.WriteString("#EXT-X-MAP:URI=\"a/init.mp4\"\n")
		for i := range 2 {
			fmt.Fprintf(&b, "#EXTINF:1.0,\na/seg%d.m4s\n", i)
		}
		b.WriteString("#EXT-X-DISCONTINUITY\n#EXT-X-MAP:URI=\"b/init.mp4\"\n")
		for i := range 2 {
			fmt.Fprintf(&b, "#EXTINF:1.0,\nb/seg%d.m4s\n", i)
		}
		b.WriteString("#EXT-X-ENDLIST\n")
		_, _ = w.Write([]byte(b.String()))
	})
	srv := httptest.NewServer(a.Wrap(mux.ServeHTTP))
	defer srv.Close()
	s := stream.New("maps", stream.Options{})
	if _, err := pulltest.Now(t, pullURL, srv.URL+"/live.m3u8", s, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if a.Count("/a/init.mp4") != 1 || a.Count("/b/init.mp4") != 1 {
		t.Fatalf("init segments asked for: %v, want a/init.mp4 then b/init.mp4", &a)
	}
	if tr := s.Tracks(); len(tr) != 2 || tr[0].Codec != media.CodecH265 {
		t.Fatalf("tracks at the end %v, want H.265 and AAC", ingest.Describe(tr))
	}
}

// TestPullOriginRestart: a live origin restarts: its playlist lists nothing for a while, then
// starts again from media sequence 0. The pull goes on from the new live edge after a
// discontinuity, rather than failing on the empty playlist or waiting for the old numbers.
func TestPullOriginRestart(t *testing.T) {
	t.Parallel()
	f := recorded(t, "ts")
	var a pulltest.Requests
	files := http.FileServer(http.Dir(f.dir))
	start := time.Now()
	srv := httptest.NewServer(a.Wrap(func(w http.ResponseWriter, r *http.Request) {
		el := time.Since(start)
		switch {
		case r.URL.Path != "/live.m3u8":
			files.ServeHTTP(w, r)
		case el < time.Second: // before: sequence 10 to 15, segments 0 to 5
			_, _ = w.Write([]byte(strings.Replace(f.media(0, 6, false), "SEQUENCE:0", "SEQUENCE:10", 1)))
		case el < 2*time.Second: // restarting, within the stall limit (3 s): nothing listed
			_, _ = w.Write([]byte("#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:1\n#EXT-X-MEDIA-SEQUENCE:0\n"))
		default: // back from 0 with three segments, then one a second, ending with the fixture
			n := 3 + int((el-2*time.Second)/time.Second)
			_, _ = w.Write([]byte(f.media(0, min(n, f.count), n >= f.count)))
		}
	}))
	defer srv.Close()
	// Play checks the units: one timeline, going on across the restart.
	pulltest.Play(t, pullURL, srv.URL+"/live.m3u8", "restart")
	// Before, playback started at sequence 13 (seg3); after, at the new sequence 0 (seg0) and
	// to the end.
	if a.Count("/seg0.ts") != 1 || a.Count("/seg5.ts") != 2 {
		t.Fatalf("asked for %v, want seg3 to seg5, then seg0 to seg5", &a)
	}
}

// TestParsePlaylistEncodings: a byte-order mark, blank lines before #EXTM3U, CRLF line ends
// and a program date without a time zone are read; a playlist of no segment is errEmpty, not
// the parser's EOF.
func TestParsePlaylistEncodings(t *testing.T) {
	plain := playlistSeeds[0]
	for name, text := range map[string]string{
		"BOM":          "\xef\xbb\xbf" + plain,
		"blank lines":  "\r\n\n" + plain,
		"CRLF":         strings.ReplaceAll(plain, "\n", "\r\n"),
		"BOM and CRLF": "\xef\xbb\xbf" + strings.ReplaceAll(plain, "\n", "\r\n"),
		// RFC 8216 4.3.2.6: a time zone SHOULD be given; sluice does not read the tag.
		"date without zone": strings.Replace(plain, "#EXTINF", "#EXT-X-PROGRAM-DATE-TIME:2026-11-29T20:00:00.000\n#EXTINF", 1),
	} {
		pl, err := parsePlaylist([]byte(text))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if m, ok := pl.(*playlist.Media); !ok || len(m.Segments) != 2 || m.MediaSequence != 7 || m.Segments[1].URI != "b.ts" {
			t.Errorf("%s: %+v", name, pl)
		}
	}
	if _, err := parsePlaylist([]byte("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:0\n")); !errors.Is(err, errEmpty) {
		t.Errorf("no segment: %v, want errEmpty", err)
	}
}

// TestSegmentMaps: each segment gets the EXT-X-MAP above it, with its byte range; a byte-order
// mark is not a segment.
func TestSegmentMaps(t *testing.T) {
	maps := segmentMaps([]byte("\xef\xbb\xbf#EXTM3U\r\n#EXT-X-TARGETDURATION:1\r\n#EXTINF:1,\r\nplain.ts\r\n" +
		"#EXT-X-MAP:URI=\"a.mp4\"\r\n#EXTINF:1,\r\na0.m4s\r\n#EXTINF:1,\r\na1.m4s\r\n#EXT-X-DISCONTINUITY\r\n" +
		"#EXT-X-MAP:URI=\"all.mp4\",BYTERANGE=\"700@100\"\r\n#EXTINF:1,\r\nb0.m4s\r\n"))
	if len(maps) != 4 || maps[0] != nil || maps[1].URI != "a.mp4" || maps[2] != maps[1] ||
		maps[3].URI != "all.mp4" || *maps[3].ByteRangeLength != 700 || *maps[3].ByteRangeStart != 100 {
		t.Fatalf("maps %+v", maps)
	}
}

// TestPullGapAndParts: a segment marked EXT-X-GAP is not asked for and the timeline goes on
// over it; the parts and preload hint of a low-latency playlist are not asked for either:
// its whole segments play.
func TestPullGapAndParts(t *testing.T) {
	t.Parallel()
	f := recorded(t, "ts")
	var a pulltest.Requests
	ll := strings.ReplaceAll(f.media(0, 6, false, "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.5", "#EXT-X-PART-INF:PART-TARGET=0.5"),
		"#EXTINF", "#EXT-X-PART:DURATION=0.5,URI=\"part.ts\",INDEPENDENT=YES\n#EXTINF")
	ll += "#EXT-X-PART:DURATION=0.5,URI=\"next.ts\"\n#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"hint.ts\"\n#EXT-X-ENDLIST\n"
	gap := strings.Replace(f.media(0, 4, true, "#EXT-X-PLAYLIST-TYPE:VOD"), "#EXTINF:1.000000,\nseg1", "#EXT-X-GAP\n#EXTINF:1.000000,\nseg1", 1)
	srv := httptest.NewServer(a.Wrap(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ll.m3u8":
			_, _ = w.Write([]byte(ll))
		case "/gap.m3u8":
			_, _ = w.Write([]byte(gap))
		default:
			http.FileServer(http.Dir(f.dir)).ServeHTTP(w, r)
		}
	}))
	defer srv.Close()
	pulltest.Play(t, pullURL, srv.URL+"/gap.m3u8", "gap")
	if a.Count("/seg1.ts") != 0 || a.Count("/seg0.ts") != 1 || a.Count("/seg2.ts") != 1 {
		t.Fatalf("asked for %v, want seg0, seg2, seg3 (seg1 is a gap)", &a)
	}
	pulltest.Play(t, pullURL, srv.URL+"/ll.m3u8", "ll")
	for _, p := range []string{"/part.ts", "/next.ts", "/hint.ts"} {
		if a.Count(p) != 0 {
			t.Fatalf("asked for %s: %v", p, &a)
		}
	}
	if a.Count("/seg5.ts") != 1 {
		t.Fatalf("asked for %v, want the whole segments", &a)
	}
}

// TestStartNearEdge: a live playlist with a window of thousands of segments starts three from
// its end, not at its first.
func TestStartNearEdge(t *testing.T) {
	var b strings.Builder
	b.WriteString("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:1000\n")
	for i := range 5000 {
		fmt.Fprintf(&b, "#EXTINF:2.0,\nseg%d.ts\n", 1000+i)
	}
	r := newRendition("main", nil, nil, defaultConfig, slog.New(slog.DiscardHandler), nil)
	pl, maps, err := r.media([]byte(b.String()), nil)
	if err != nil {
		t.Fatal(err)
	}
	r.take(pl, maps)
	seg, _, _, err := r.nextSegment(context.Background())
	if err != nil || seg == nil || seg.URI != "seg5997.ts" {
		t.Fatalf("first segment %+v, %v; want seg5997.ts", seg, err)
	}
}

// TestPullReloadsAfterRedirect: after a permanent redirect (301, 308) of the media playlist, its
// reloads go to the new URL; after a temporary one (302, 307) they keep asking the URL first
// given (RFC 9110 15.4). Either way its URIs resolve against where it came from. Both for the
// playlist a pull is given and for a variant of a multivariant playlist.
func TestPullReloadsAfterRedirect(t *testing.T) {
	t.Parallel()
	f := recorded(t, "ts")
	for _, code := range []int{http.StatusMovedPermanently, http.StatusPermanentRedirect, http.StatusFound, http.StatusTemporaryRedirect} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			t.Parallel()
			permanent := code == http.StatusMovedPermanently || code == http.StatusPermanentRedirect
			for _, entry := range []string{"/old/live.m3u8", "/master.m3u8"} {
				var a pulltest.Requests
				files := http.StripPrefix("/new/", http.FileServer(http.Dir(f.dir)))
				start := time.Now()
				srv := httptest.NewServer(a.Wrap(func(w http.ResponseWriter, r *http.Request) {
					switch r.URL.Path {
					case "/master.m3u8":
						_, _ = w.Write([]byte("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=400000,CODECS=\"avc1.42c00d,mp4a.40.2\"\nold/live.m3u8\n"))
					case "/old/live.m3u8":
						http.Redirect(w, r, "/new/live.m3u8", code)
					case "/new/live.m3u8": // three segments, then one more a second
						n := 3 + int(time.Since(start)/time.Second)
						_, _ = w.Write([]byte(f.media(0, min(n, f.count), n >= f.count)))
					default:
						files.ServeHTTP(w, r)
					}
				}))
				pulltest.Play(t, pullURL, srv.URL+entry, "moved")
				srv.Close()
				old, moved := a.Count("/old/live.m3u8"), a.Count("/new/live.m3u8")
				if a.Count("/new/seg") != f.count || moved < 3 {
					t.Fatalf("%s: asked %v, want the segments below /new/ and reloads", entry, &a)
				}
				if permanent && old != 1 {
					t.Errorf("%s: after a %d the old URL was asked %d times (the new one %d), want once", entry, code, old, moved)
				}
				if !permanent && old != moved {
					t.Errorf("%s: after a %d the old URL was asked %d times, the new one %d: want every reload at the old", entry, code, old, moved)
				}
			}
		})
	}
}

// TestPullMissingSegment: a listed segment that answers 404 (or 410) for good is asked for a few
// times (three for a 404, once for a 410), then skipped: the pull goes on with the next segment,
// its timestamps keeping the hole, and ends normally. A segment
// that answers 503 is not skipped but retried until the stall limit, and so is a 404 when no
// segment was ever served.
func TestPullMissingSegment(t *testing.T) {
	t.Parallel()
	f := recorded(t, "ts")
	vod := f.media(0, f.count, true, "#EXT-X-PLAYLIST-TYPE:VOD")
	for _, tc := range []struct {
		code    int
		missing string // the segments answering code
		skipped bool   // played to the end; else a stall
	}{
		{http.StatusNotFound, "/seg2.ts", true},
		{http.StatusGone, "/seg2.ts", true},
		{http.StatusServiceUnavailable, "/seg2.ts", false},
		{http.StatusNotFound, "/seg", false},
	} {
		t.Run(fmt.Sprintf("%d %s", tc.code, tc.missing), func(t *testing.T) {
			t.Parallel()
			var a pulltest.Requests
			srv := a.Origin(t, f.dir, "/live.m3u8", vod, func(w http.ResponseWriter, r *http.Request) bool {
				if strings.HasPrefix(r.URL.Path, tc.missing) {
					w.WriteHeader(tc.code)
					return true
				}
				return false
			})
			if !tc.skipped {
				_, err := pulltest.Now(t, pullURL, srv.URL+"/live.m3u8", stream.New("missing", stream.Options{}), 30*time.Second)
				if !errors.Is(err, httpget.ErrStalled) || !httpget.IsStatus(err, tc.code) {
					t.Fatalf("err %v, want a stall on the %d", err, tc.code)
				}
				return
			}
			_, s, aus := pulltest.Play(t, pullURL, srv.URL+"/live.m3u8", "missing")
			tries, want := a.Count("/seg2.ts"), livepull.MissingTries
			if tc.code == http.StatusGone {
				want = 1
			}
			if tries < want || tries > want+2 || a.Count("/seg3.ts") != 1 || a.Count("/seg5.ts") != 1 {
				t.Fatalf("asked %v: seg2 %d times, want %d or a little more, then seg3 to seg5", &a, tries, want)
			}
			// Five of six segments of 25 frames, over the six's time: the hole is kept.
			first, last, n := pulltest.VideoSpan(s.Tracks(), aus)
			if n != 125 || last-first < 147*3600 || last-first > 151*3600 {
				t.Fatalf("%d video units over %d ticks, want 125 over about 149 frames", n, last-first)
			}
		})
	}
}
