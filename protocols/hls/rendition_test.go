package hls

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/protocols/internal/httpget"
	"github.com/sluicemedia/sluice/protocols/internal/ingest"
	"github.com/sluicemedia/sluice/protocols/internal/pulltest"
)

// TestPullVODFromStart plays a VOD playlist from its first segment to its end, in real time.
func TestPullVODFromStart(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"ts", "fmp4"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			f := recorded(t, kind)
			srv := scripted(t, f, func() string { return "" })
			took, s, aus := pulltest.Play(t, pullURL, srv.URL+"/vod.m3u8", "vod")
			first, last, _ := pulltest.VideoSpan(s.Tracks(), aus)
			// 6 s at 25 fps: the first frame at 0 (the timeline starts at the first unit, the
			// first picture or audio frame, which comes at most an audio packet ahead of it),
			// the last at 5.96 s.
			if first < 0 || first > 9000 || last < 5*90000 {
				t.Fatalf("video DTS from %d to %d, want about 0 to about 5.96 s", first, last)
			}
			if took < 5*time.Second {
				t.Fatalf("6 s played in %v: not paced", took)
			}
		})
	}
}

// TestPullWaitsForSegments starts on a live playlist that lists one segment and grows by one
// a second: Pull waits for three, plays, and returns nil at EXT-X-ENDLIST.
func TestPullWaitsForSegments(t *testing.T) {
	t.Parallel()
	f := recorded(t, "ts")
	start := time.Now()
	srv := scripted(t, f, func() string {
		n := 1 + int(time.Since(start)/time.Second)
		return f.media(0, min(n, f.count), n >= f.count)
	})
	_, s, _ := pulltest.Play(t, pullURL, srv.URL+"/live.m3u8", "grow")
	if s.Stats().UnitsIn == 0 {
		t.Fatal("no media")
	}
}

// TestPullStalls plays a live playlist that stops growing: Pull fails with a stall about three
// target durations after the last new segment.
func TestPullStalls(t *testing.T) {
	t.Parallel()
	f := recorded(t, "fmp4")
	srv := scripted(t, f, func() string { return f.media(0, 4, false) })
	s := stream.New("stall", stream.Options{})
	took, err := pulltest.Now(t, pullURL, srv.URL+"/live.m3u8", s, 60*time.Second)
	if !errors.Is(err, httpget.ErrStalled) {
		t.Fatalf("err %v, want a stall", err)
	}
	// The last new segment appeared at the start; the limit is 3 × 1 s.
	if took < 3*time.Second || took > 15*time.Second {
		t.Fatalf("stall reported after %v", took)
	}
	t.Logf("%v after %v", err, took.Round(time.Millisecond))
}

// TestPullErrors covers the failures that come at once.
func TestPullErrors(t *testing.T) {
	t.Parallel()
	f := recorded(t, "ts")
	cases := []pulltest.ErrorCase{
		{Name: "not found", Text: "", Want: func(err error) bool { return strings.Contains(err.Error(), "404") }},
		{Name: "not a playlist", Text: "<html>hello</html>", Want: func(err error) bool { return err != nil }},
		{Name: "encrypted", Text: f.media(0, 6, true, `#EXT-X-KEY:METHOD=AES-128,URI="key.bin"`),
			Want: func(err error) bool {
				return errors.Is(err, errEncrypted) && strings.Contains(err.Error(), "METHOD=AES-128")
			}},
		{Name: "sample-aes", Text: f.media(0, 6, true, `#EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://key",KEYFORMAT="com.apple.streamingkeydelivery"`),
			Want: func(err error) bool { return errors.Is(err, errEncrypted) }},
		{Name: "sample-aes-ctr", Text: f.media(0, 6, true, `#EXT-X-KEY:METHOD=SAMPLE-AES-CTR,URI="data:text/plain;base64,AAAA"`),
			Want: func(err error) bool {
				return errors.Is(err, errEncrypted) && strings.Contains(err.Error(), "SAMPLE-AES-CTR")
			}},
		{Name: "no variant", Text: "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1000,CODECS=\"vp09.00.10.08\"\nv.m3u8\n" +
			"#EXT-X-STREAM-INF:BANDWIDTH=2000,CODECS=\"av01.0.08M.08,ac-3\"\nw.m3u8\n",
			Want: func(err error) bool {
				return errors.Is(err, errNoVariant) && strings.Contains(err.Error(), "av01.0.08M.08,ac-3")
			}},
		{Name: "garbage segments", Text: strings.ReplaceAll(f.media(0, 3, true), "seg", "junk"),
			Want: func(err error) bool { return errors.Is(err, ErrNoMedia) && errors.Is(err, stream.ErrNoMedia) }},
		{Name: "2 MB of random bytes", Text: string(pulltest.Junk(2 << 20)), Want: func(err error) bool { return err != nil }},
		{Name: "2 MB after #EXTM3U", Text: "#EXTM3U\n" + string(pulltest.Junk(2<<20)), Want: func(err error) bool { return err != nil }},
	}
	pulltest.CheckErrors(t, pullURL, pulltest.ErrorServer{Path: "/live.m3u8", JunkSize: 300000, Else: http.NotFoundHandler()}, cases)
	if err := Pull(context.Background(), stream.New("e", stream.Options{}), PullOptions{URL: "rtmp://host/app"}); err == nil {
		t.Fatal("rtmp:// accepted")
	}
}

// TestPullCaps: a playlist or a segment over its cap ends the pull with an error that names
// the URL and the cap.
func TestPullCaps(t *testing.T) {
	const media = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:1\n#EXT-X-MEDIA-SEQUENCE:0\n" +
		"#EXTINF:1.0,\nseg0.ts\n#EXTINF:1.0,\nseg1.ts\n#EXT-X-ENDLIST\n"
	cfg := defaultConfig
	cfg.MaxPlaylist, cfg.MaxSegment = 1000, 5000
	pulltest.CheckCaps(t, pull, cfg, pulltest.Caps{
		BigPath: "/big.m3u8", Big: "#EXTM3U\n" + strings.Repeat("#EXT-X-COMMENT\n", 100), BigWhere: "hls pull %s/big.m3u8: playlist: ",
		SmallPath: "/media.m3u8", Small: media, SegmentWhere: "segment %s/seg0.ts: ",
		TooLarge: httpget.ErrTooLarge,
	})
}

// TestPullRepeat pulls a short VOD playlist four times into one Stream: three
// discontinuities, each seen by a reader, and nothing left behind.
func TestPullRepeat(t *testing.T) {
	f := recorded(t, "ts")
	srv := scripted(t, f, func() string { return f.media(0, 2, true, "#EXT-X-PLAYLIST-TYPE:VOD") })
	pulltest.CheckRepeat(t, pullURL, srv.URL+"/live.m3u8")
}

// TestPullBusy refuses a stream that already has a publisher.
func TestPullBusy(t *testing.T) {
	t.Parallel()
	f := recorded(t, "ts")
	srv := scripted(t, f, func() string { return f.media(0, 6, true) })
	pulltest.CheckBusy(t, pullURL, srv.URL+"/live.m3u8")
}

// TestPullSeparateAudio plays a variant whose audio comes from its own rendition playlist:
// both tracks are published, interleaved by time.
func TestPullSeparateAudio(t *testing.T) {
	t.Parallel()
	f := recorded(t, "ts")
	var once sync.Once
	var audioAsked bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/master.m3u8":
			_, _ = w.Write([]byte("#EXTM3U\n" +
				`#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="en",DEFAULT=YES,URI="audio.m3u8"` + "\n" +
				`#EXT-X-STREAM-INF:BANDWIDTH=400000,CODECS="avc1.42c00d,mp4a.40.2",AUDIO="aud"` + "\nvideo.m3u8\n"))
		case "/video.m3u8":
			_, _ = w.Write([]byte(f.media(0, 6, true)))
		case "/audio.m3u8":
			once.Do(func() { audioAsked = true })
			_, _ = w.Write([]byte(f.media(0, 6, true)))
		default:
			http.FileServer(http.Dir(f.dir)).ServeHTTP(w, r)
		}
	}))
	defer srv.Close()
	_, s, _ := pulltest.Play(t, pullURL, srv.URL+"/master.m3u8", "alt")
	if !audioAsked {
		t.Fatal("the audio rendition was not loaded")
	}
	// The fixture's segments carry video and audio: the stream has both from each playlist.
	tracks := s.Tracks()
	if len(tracks) != 4 || tracks[0].Codec != media.CodecH264 || tracks[3].Codec != media.CodecAAC {
		t.Fatalf("tracks %v", ingest.Describe(tracks))
	}
}

// TestPullNoSecret: the playlist's address and its segments' carry a password and a token
// (signed URLs), the origin fails: no error or log line shows them.
func TestPullNoSecret(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:1\n#EXT-X-MEDIA-SEQUENCE:0\n")
	for i := range 4 {
		b.WriteString("#EXTINF:1.000,\nseg" + strconv.Itoa(i) + ".ts?token=" + pulltest.SecretToken + "\n")
	}
	pulltest.CheckNoSecret(t, pullURL, "/live.m3u8", b.String())
}
