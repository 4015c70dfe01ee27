package browser

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// codecs are what the live test streams carry; without them in MSE nothing can play.
var codecs = []string{"avc1.42E01E", "avc1.64001F", "mp4a.40.2"}

// TestPlayLive proves the harness on live streams that ffmpeg writes while they play: hls.js and
// dash.js must advance currentTime by at least 8 s over a 12 s window with no fatal error, and
// Chromium must decode both video and audio.
func TestPlayLive(t *testing.T) {
	testutil.RequireFFmpeg(t)
	Require(t)
	dir := t.TempDir()
	srv := httptest.NewServer(cors(http.FileServer(http.Dir(dir))))
	t.Cleanup(srv.Close)

	cases := []struct {
		kind     string
		playlist string
		muxer    []string
		opts     []Option
	}{
		{
			kind:     "hls",
			playlist: "hls/index.m3u8",
			muxer: []string{"-f", "hls", "-hls_time", "2", "-hls_list_size", "6",
				"-hls_flags", "delete_segments", "-hls_segment_type", "fmp4"},
		},
		{
			kind:     "dash",
			playlist: "dash/index.mpd",
			muxer: []string{"-f", "dash", "-seg_duration", "2", "-window_size", "6",
				"-streaming", "0", "-use_template", "1", "-use_timeline", "1"},
			// ffmpeg's MPD says suggestedPresentationDelay=PT2S, one segment, while it writes a
			// segment only once complete: dash.js would wait at the very edge and stall. Stay
			// three segments behind, as hls.js does by default.
			opts: []Option{LiveDelay(6 * time.Second)},
		},
	}
	// Both encoders start now, so DASH has segments by the time HLS has played.
	for _, tc := range cases {
		out := filepath.Join(dir, tc.playlist)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			t.Fatal(err)
		}
		testutil.FFmpeg(t, append(append(testutil.Source(800), tc.muxer...), out)...)
	}
	for _, tc := range cases {
		t.Run(tc.kind, func(t *testing.T) {
			waitSegments(t, filepath.Join(dir, tc.playlist), 3)
			r := Play(t, tc.kind, srv.URL+"/"+tc.playlist, 12*time.Second, tc.opts...)
			for _, c := range codecs {
				if !r.Support[c] {
					t.Fatalf("this Chromium (%s) cannot decode %s in MSE (support %v): "+
						"hls.js and dash.js cannot play H.264/AAC here", r.Browser, c, r.Support)
				}
			}
			if len(r.Errors) > 0 || !r.OK {
				t.Fatalf("%s did not play: %s", tc.kind, r)
			}
			if r.PlayedSeconds < 8 {
				t.Fatalf("%s played %.1f s in a 12 s window, want at least 8 s: %s", tc.kind, r.PlayedSeconds, r)
			}
			d := r.Decoded
			if d.VideoFrames < 100 || d.AudioBytes == 0 || d.Width != 640 || d.Height != 360 {
				t.Fatalf("%s decoded %+v, want 640x360 video frames and audio", tc.kind, d)
			}
		})
	}
}

// TestPlayMissing proves the harness reports a stream that cannot play instead of passing it.
func TestPlayMissing(t *testing.T) {
	Require(t)
	srv := httptest.NewServer(cors(http.NotFoundHandler()))
	t.Cleanup(srv.Close)
	for _, tc := range []struct{ kind, path string }{
		{"hls", "/nothing/index.m3u8"},
		{"dash", "/nothing/index.mpd"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			r := Play(t, tc.kind, srv.URL+tc.path, 2*time.Second)
			if r.OK || len(r.Errors) == 0 || r.PlayedSeconds != 0 {
				t.Fatalf("a 404 %s played: %s", tc.kind, r)
			}
		})
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		ok        bool
		played    float64
	}{
		{"result", `{"ok":true,"kind":"hls","playedSeconds":12.5,"errors":[]}` + "\n", true, 12.5},
		{"noise before", "npm notice\n" + `{"ok":false,"playedSeconds":0,"errors":["x"]}`, true, 0},
		{"empty", "", false, 0},
		{"not json", "Error: boom\n", false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := parse([]byte(tc.out))
			if (err == nil) != tc.ok {
				t.Fatalf("parse(%q) err = %v, want ok %v", tc.out, err, tc.ok)
			}
			if r.PlayedSeconds != tc.played {
				t.Fatalf("parse(%q) played %v, want %v", tc.out, r.PlayedSeconds, tc.played)
			}
		})
	}
}

func TestModuleRoot(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("moduleRoot() = %s without go.mod", root)
	}
}

// cors lets the harness page (another origin) fetch the media, as sluice's HTTP server does.
func cors(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Cache-Control", "no-cache")
		switch filepath.Ext(r.URL.Path) {
		case ".m3u8":
			w.Header().Set("Content-Type", "application/vnd.apple.mpegurl")
		case ".mpd":
			w.Header().Set("Content-Type", "application/dash+xml")
		case ".m4s", ".mp4":
			w.Header().Set("Content-Type", "video/mp4")
		}
		h.ServeHTTP(w, r)
	})
}

// waitSegments waits until the playlist or MPD lists at least n media segments.
func waitSegments(t *testing.T, playlist string, n int) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, "ffmpeg writes "+playlist, func() bool {
		b, err := os.ReadFile(playlist)
		if err != nil {
			return false
		}
		if strings.HasSuffix(playlist, ".m3u8") {
			return strings.Count(string(b), "#EXTINF") >= n
		}
		segs, _ := filepath.Glob(filepath.Join(filepath.Dir(playlist), "chunk-stream0-*.m4s"))
		return len(segs) >= n
	})
}
