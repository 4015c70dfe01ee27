package dash

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

// TestLoaderCaps: a body over its cap fails with errTooLarge, whether its length is declared
// or not, and is never retried; a body at the cap is read whole.
func TestLoaderCaps(t *testing.T) {
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
	defer srv.Close()
	cfg := defaultConfig
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxResponseHeaderBytes = maxResponseHeaderBytes
	defer tr.CloseIdleConnections()
	ld := &loader{client: &http.Client{Transport: tr}, cfg: cfg}
	for _, tc := range []struct {
		path  string
		limit int64
		size  int
		err   string
	}{
		{"/chunked/5000", 5000, 5000, ""},
		{"/chunked/5001", 5000, 0, "over the cap of 5000 bytes"},
		{"/declared/5001", 5000, 0, "declares 5001 bytes, over the cap of 5000 bytes"},
		{"/declared/67108865", cfg.maxSegment, 0, "declares 67108865 bytes, over the cap of 67108864 bytes"},
		{"/chunked/4194305", cfg.maxPlaylist, 0, "over the cap of 4194304 bytes"},
		{"/bigheader", cfg.maxPlaylist, 0, "response headers exceeded"},
	} {
		u, _ := url.Parse(srv.URL + tc.path)
		b, err := ld.getRetry(context.Background(), u, tc.limit, time.Now(), nil)
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

// TestPullCaps: an MPD or a segment over its cap ends the pull with an error that names the
// URL and the cap.
func TestPullCaps(t *testing.T) {
	const mpd = `<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT2S" minBufferTime="PT2S">
	<Period id="0" start="PT0S">
		<AdaptationSet mimeType="video/mp4" codecs="avc1.64001f">
			<SegmentTemplate timescale="1000" duration="1000" startNumber="1" initialization="init.mp4" media="seg$Number$.m4s"/>
			<Representation id="v" bandwidth="1000000" width="640" height="360"/>
		</AdaptationSet>
	</Period>
</MPD>`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big.mpd":
			_, _ = w.Write([]byte(mpd + strings.Repeat("<!-- padding -->\n", 100)))
		case "/index.mpd":
			_, _ = w.Write([]byte(mpd))
		default:
			_, _ = w.Write(make([]byte, 6000))
		}
	}))
	defer srv.Close()
	cfg := defaultConfig
	cfg.maxPlaylist, cfg.maxSegment = 1000, 5000
	for _, tc := range []struct{ path, where, want string }{
		{"/big.mpd", "dash pull " + srv.URL + "/big.mpd: MPD: ", "over the cap of 1000 bytes"},
		{"/index.mpd", "segment " + srv.URL + "/init.mp4: ", "over the cap of 5000 bytes"},
	} {
		err := pull(context.Background(), srv.URL+tc.path, stream.New("caps", stream.Options{}), slog.New(slog.DiscardHandler), cfg)
		if err == nil || !strings.Contains(err.Error(), tc.where) || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, errTooLarge) {
			t.Errorf("%s: %v, want an error with %q and %q", tc.path, err, tc.where, tc.want)
		}
	}
}
