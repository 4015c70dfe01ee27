package hls

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/ingest"
	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
)

// pullNow runs Pull to its end with a deadline.
func pullNow(t testing.TB, url string, s *stream.Stream, d time.Duration) (time.Duration, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	err := Pull(ctx, url, s, streamtest.Log())
	if ctx.Err() != nil {
		t.Fatalf("Pull still running after %v", d)
	}
	return time.Since(start), err
}

// TestPullVODFromStart plays a VOD playlist from its first segment to its end, in real time.
func TestPullVODFromStart(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"ts", "fmp4"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			f := recorded(t, kind)
			srv := scripted(t, f, func() string { return "" })
			s := stream.New("vod", stream.Options{})
			c := streamtest.Collect(t, s)
			took, err := pullNow(t, srv.URL+"/vod.m3u8", s, 60*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			c.Stop()
			aus := c.Snapshot()
			tracks := s.Tracks()
			streamtest.CheckPulled(t, tracks, aus)
			var first, last int64 = -1, 0
			for _, au := range aus {
				if tracks[au.Track].Codec.IsVideo() {
					if first < 0 {
						first = au.DTS
					}
					last = au.DTS
				}
			}
			// 6 s at 25 fps: the first frame at 0, the last at 5.96 s.
			if first != 0 || last < 5*90000 {
				t.Fatalf("video DTS from %d to %d, want 0 to about 5.96 s", first, last)
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
	s := stream.New("grow", stream.Options{})
	c := streamtest.Collect(t, s)
	_, err := pullNow(t, srv.URL+"/live.m3u8", s, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.Stop()
	streamtest.CheckPulled(t, s.Tracks(), c.Snapshot())
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
	took, err := pullNow(t, srv.URL+"/live.m3u8", s, 60*time.Second)
	if !errors.Is(err, errStalled) {
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
	cases := []struct {
		name, playlist string
		want           func(error) bool
	}{
		{"not found", "", func(err error) bool { return strings.Contains(err.Error(), "404") }},
		{"not a playlist", "<html>hello</html>", func(err error) bool { return err != nil }},
		{"encrypted", f.media(0, 6, true, `#EXT-X-KEY:METHOD=AES-128,URI="key.bin"`),
			func(err error) bool { return errors.Is(err, errEncrypted) }},
		{"no variant", "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1000,CODECS=\"vp09.00.10.08\"\nv.m3u8\n",
			func(err error) bool { return errors.Is(err, errNoVariant) }},
		{"garbage segments", strings.ReplaceAll(f.media(0, 3, true), "seg", "junk"),
			func(err error) bool { return errors.Is(err, ErrNoMedia) }},
		{"2 MB of random bytes", string(junk(2 << 20)), func(err error) bool { return err != nil }},
		{"2 MB after #EXTM3U", "#EXTM3U\n" + string(junk(2<<20)), func(err error) bool { return err != nil }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.URL.Path == "/live.m3u8" && tc.playlist != "":
					_, _ = w.Write([]byte(tc.playlist))
				case strings.HasPrefix(r.URL.Path, "/junk"):
					_, _ = w.Write(junk(300000))
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			took, err := pullNow(t, srv.URL+"/live.m3u8", stream.New("e", stream.Options{}), 30*time.Second)
			if err == nil || !tc.want(err) {
				t.Fatalf("err %v", err)
			}
			t.Logf("%v (after %v)", err, took.Round(time.Millisecond))
		})
	}
	if err := Pull(context.Background(), "rtmp://host/app", stream.New("e", stream.Options{}), nil); err == nil {
		t.Fatal("rtmp:// accepted")
	}
}

// junk returns n pseudo-random bytes.
func junk(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// TestPullRepeat pulls a short VOD playlist four times into one Stream: three
// discontinuities, and nothing left behind.
func TestPullRepeat(t *testing.T) {
	f := recorded(t, "ts")
	srv := scripted(t, f, func() string { return f.media(0, 2, true, "#EXT-X-PLAYLIST-TYPE:VOD") })
	s := stream.New("repeat", stream.Options{})
	c := streamtest.Collect(t, s)
	base := testutil.TakeBaseline()
	for i := range 4 {
		if _, err := pullNow(t, srv.URL+"/live.m3u8", s, 30*time.Second); err != nil {
			t.Fatalf("pull %d: %v", i, err)
		}
	}
	if d := s.Discontinuities(); d != 3 {
		t.Fatalf("%d discontinuities, want 3", d)
	}
	base.Check(t, 20*time.Second)
	c.Stop()
	var discs int
	for _, au := range c.Snapshot() {
		if au.Discontinuity {
			discs++
		}
	}
	if discs != 3 {
		t.Fatalf("reader saw %d discontinuities, want 3", discs)
	}
}

// TestPullBusy refuses a stream that already has a publisher.
func TestPullBusy(t *testing.T) {
	t.Parallel()
	f := recorded(t, "ts")
	srv := scripted(t, f, func() string { return f.media(0, 6, true) })
	s := stream.New("busy", stream.Options{})
	pub, err := s.Publish()
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	if _, err := pullNow(t, srv.URL+"/live.m3u8", s, 30*time.Second); !errors.Is(err, stream.ErrBusy) {
		t.Fatalf("err %v, want ErrBusy", err)
	}
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
	s := stream.New("alt", stream.Options{})
	c := streamtest.Collect(t, s)
	if _, err := pullNow(t, srv.URL+"/master.m3u8", s, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	c.Stop()
	if !audioAsked {
		t.Fatal("the audio rendition was not loaded")
	}
	// The fixture's segments carry video and audio: the stream has both from each playlist.
	tracks := s.Tracks()
	if len(tracks) != 4 || tracks[0].Codec != media.CodecH264 || tracks[3].Codec != media.CodecAAC {
		t.Fatalf("tracks %v", ingest.Describe(tracks))
	}
	streamtest.CheckPulled(t, tracks, c.Snapshot())
}
