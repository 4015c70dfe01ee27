package hls

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
)

// sizeServer answers /declared/N with a Content-Length of N and 10 bytes, /chunked/N with N
// bytes and no length, and /bigheader with 100 KiB of headers.
func sizeServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind, num, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		n, _ := strconv.Atoi(num)
		switch kind {
		case "declared":
			w.Header().Set("Content-Length", num)
			_, _ = w.Write(make([]byte, 10))
		case "chunked":
			for sent := 0; sent < n; sent += 1000 {
				_, _ = w.Write(make([]byte, min(1000, n-sent)))
				_ = http.NewResponseController(w).Flush()
			}
		case "bigheader":
			w.Header().Set("X-Big", strings.Repeat("x", 100<<10))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestLoaderCaps: a body over its cap fails with errTooLarge, whether its length is declared
// or not, and is never retried; a body at the cap is read whole.
func TestLoaderCaps(t *testing.T) {
	srv := sizeServer(t)
	cfg := defaultConfig
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxResponseHeaderBytes = maxResponseHeaderBytes
	ld := &loader{client: &http.Client{Transport: tr}, cfg: cfg}
	defer tr.CloseIdleConnections()
	for _, tc := range []struct {
		path  string
		limit int64
		size  int    // the body read, when no error
		err   string // part of the error
	}{
		{"/chunked/5000", 5000, 5000, ""},
		{"/chunked/5001", 5000, 0, "over the cap of 5000 bytes"},
		{"/declared/5001", 5000, 0, "declares 5001 bytes, over the cap of 5000 bytes"},
		{"/declared/67108865", cfg.maxSegment, 0, "declares 67108865 bytes, over the cap of 67108864 bytes"},
		{"/chunked/4194305", cfg.maxPlaylist, 0, "over the cap of 4194304 bytes"},
		{"/bigheader", cfg.maxPlaylist, 0, "response headers exceeded"},
	} {
		u, _ := url.Parse(srv.URL + tc.path)
		b, err := ld.getRetry(context.Background(), u, nil, tc.limit, time.Now())
		if tc.err == "" {
			if err != nil || len(b) != tc.size {
				t.Errorf("%s: %d bytes, %v; want %d bytes", tc.path, len(b), err, tc.size)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want an error with %q", tc.path, err, tc.err)
		}
		if strings.Contains(tc.err, "cap") && !errors.Is(err, errTooLarge) {
			t.Errorf("%s: %v does not wrap errTooLarge", tc.path, err)
		}
	}
}

// TestPullCaps: a playlist or a segment over its cap ends the pull with an error that names
// the URL and the cap.
func TestPullCaps(t *testing.T) {
	const media = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:1\n#EXT-X-MEDIA-SEQUENCE:0\n" +
		"#EXTINF:1.0,\nseg0.ts\n#EXTINF:1.0,\nseg1.ts\n#EXT-X-ENDLIST\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big.m3u8":
			_, _ = w.Write([]byte("#EXTM3U\n" + strings.Repeat("#EXT-X-COMMENT\n", 100)))
		case "/media.m3u8":
			_, _ = w.Write([]byte(media))
		default:
			_, _ = w.Write(make([]byte, 6000))
		}
	}))
	defer srv.Close()
	cfg := defaultConfig
	cfg.maxPlaylist, cfg.maxSegment = 1000, 5000
	for _, tc := range []struct{ path, where, want string }{
		{"/big.m3u8", "hls pull " + srv.URL + "/big.m3u8: playlist: ", "over the cap of 1000 bytes"},
		{"/media.m3u8", "segment " + srv.URL + "/seg0.ts: ", "over the cap of 5000 bytes"},
	} {
		err := pull(context.Background(), srv.URL+tc.path, stream.New("caps", stream.Options{}), slog.New(slog.DiscardHandler), cfg)
		if err == nil || !strings.Contains(err.Error(), tc.where) || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, errTooLarge) {
			t.Errorf("%s: %v, want an error with %q and %q", tc.path, err, tc.where, tc.want)
		}
	}
}
