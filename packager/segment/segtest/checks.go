package segtest

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/browser"
	"github.com/sluicemedia/sluice/packager/segment"
)

// What the HLS and DASH players' tests share: a store for benchmarks, waiting for segments,
// a browser playing across an input gap, and ffprobe reading a packaged clip.

// BenchStore returns a store holding a 60 s window of 2 s segments (30 listed, 2 grace).
func BenchStore(b *testing.B) *segment.Store {
	b.Helper()
	st := segment.NewStore(segment.StoreOptions{Window: time.Minute})
	sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: 2 * time.Second, Log: Quiet})
	src := NewSource(50, time.Now())
	_ = sg.SetTracks(src.Tracks())
	if err := src.Feed(sg, 90*time.Second); err != nil {
		b.Fatal(err)
	}
	return st
}

// BenchManifest measures render making the manifest of win into a reused buffer, and counts
// the manifest's size as the bytes of one operation.
func BenchManifest(b *testing.B, win *segment.Window, render func(buf []byte, win *segment.Window) []byte) {
	b.Helper()
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = render(buf[:0], win)
	}
	b.SetBytes(int64(len(buf)))
}

// WaitSegments waits (at most 60 s) until the store made n segments.
func WaitSegments(t testing.TB, st *segment.Store, n int64) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for st.Snapshot().Added < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d segments from the live source, want %d", st.Snapshot().Added, n)
		}
		select {
		case <-st.Wait():
		case <-time.After(time.Second):
		}
	}
}

// CheckPlaysAcrossGap plays a live stream (ffmpeg in real time → segmenter → store, two
// 12 s sessions 2 s apart) with the browser player kind ("hls" or "dash") for 20 s, from path
// of the server of handler: it must play 12 s or more of the clip's size, with audio, and the
// store must count one discontinuity.
func CheckPlaysAcrossGap(t *testing.T, kind string, handler func(*segment.Store) http.Handler, path string) {
	t.Helper()
	browser.Require(t)
	st := segment.NewStore(segment.StoreOptions{Window: 30 * time.Second})
	sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: 2 * time.Second, Log: Quiet})
	srv := httptest.NewServer(handler(st))
	defer srv.Close()
	Live(t, LiveOptions{Sessions: 2, SessionLength: 12 * time.Second, Gap: 2 * time.Second}, sg)
	WaitSegments(t, st, 3)
	res := Play(t, kind, srv.URL+path, 20*time.Second)
	t.Logf("%s; warnings %q", res, res.Warnings)
	if !res.OK || res.PlayedSeconds < 12 || res.Decoded.Width != ClipWidth || res.Decoded.AudioBytes == 0 {
		t.Fatalf("%s.js playback failed: %s\nwarnings %q\nconsole %q", kind, res, res.Warnings, res.Console)
	}
	if discs := st.Snapshot().Newest().DiscSeq; discs != 1 {
		t.Errorf("%d discontinuities during playback, want 1", discs)
	}
}

// ServeClip packages MakeTS's clip of codec with 2 s segments and serves it with handler's
// server, which stops when the test ends.
func ServeClip(t testing.TB, codec string, handler func(*segment.Store) http.Handler) *httptest.Server {
	t.Helper()
	path := MakeTS(t, codec)
	st := segment.NewStore(segment.StoreOptions{})
	sg := segment.NewSegmenter(st, segment.SegmenterOptions{Target: 2 * time.Second, Log: Quiet})
	FeedTS(t, path, time.Now().Add(-ClipSeconds*time.Second), sg)
	srv := httptest.NewServer(handler(st))
	t.Cleanup(srv.Close)
	return srv
}

// CheckProbe has ffprobe read url: it must find video of codec video at the clip's size, and
// audio of codec audio (ffprobe's codec names).
func CheckProbe(t testing.TB, url, video, audio string) {
	t.Helper()
	p := testutil.FFprobe(t, url, false)
	var gotVideo, gotAudio bool
	for _, s := range p.Streams {
		switch s.CodecType {
		case "video":
			gotVideo = s.CodecName == video && s.Width == ClipWidth && s.Height == ClipHeight
		case "audio":
			gotAudio = s.CodecName == audio
		}
	}
	if !gotVideo || !gotAudio {
		t.Fatalf("ffprobe %s: %+v", url, p.Streams)
	}
}
