package console

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
)

// testFS is a ui folder like the embedded one; built adds the vendor files.
func testFS(t *testing.T, built bool) *Site {
	t.Helper()
	m := fstest.MapFS{
		"ui/pages/index.html": {Data: []byte(`<html><head><script type="module" src="{{.Assets}}/js/app.js"></script></head></html>`)},
		"ui/pages/watch.html": {Data: []byte(`<title>{{.Name}}</title><main id="watch" data-src="{{.Src}}" data-format="{{.Format}}"` +
			` data-initial-live-manifest-size="{{.InitialLiveManifestSize}}" data-live-sync-duration-count="{{.LiveSyncDurationCount}}">` +
			`{{if eq .Format "dash"}}<script src="{{.Assets}}/vendor/dash.mediaplayer.min.js"></script>{{else}}<script src="{{.Assets}}/vendor/hls.min.js"></script>{{end}}`)},
		"ui/js/app.js":             {Data: []byte(strings.Repeat("export const a = 1;\n", 200))},
		"ui/css/console.css":       {Data: []byte("body{}")},
		"ui/vendor/README.txt":     {Data: []byte("placeholder")},
		"ui/icon.svg":              {Data: []byte("<svg/>")},
		"ui/odd.bin":               {Data: []byte{1, 2, 3}},
		"ui/pages/not-an-asset.js": {Data: []byte("x")},
	}
	if built {
		for _, v := range vendorFiles {
			m["ui/"+v] = &fstest.MapFile{Data: []byte("/* " + v + " */")}
		}
	}
	s, err := newSite(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func get(t *testing.T, h http.Handler, method, target string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func body(t *testing.T, res *httptest.ResponseRecorder) string {
	t.Helper()
	return res.Body.String()
}

func TestConsolePageHeadersAndNoInlineCode(t *testing.T) {
	t.Parallel()
	s := testFS(t, true)
	res := get(t, s.Handler(), http.MethodGet, "/")
	if res.Code != http.StatusOK {
		t.Fatalf("GET /: %d", res.Code)
	}
	for k, want := range map[string]string{
		"Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff",
		"Content-Security-Policy": consoleCSP,
	} {
		if got := res.Header().Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	csp := res.Header().Get("Content-Security-Policy")
	for _, bad := range []string{"unsafe-inline", "unsafe-eval", "*"} {
		if strings.Contains(csp, bad) {
			t.Errorf("console CSP allows %s: %s", bad, csp)
		}
	}
	html := body(t, res)
	if !strings.Contains(html, `src="/assets/`+s.Version()+`/js/app.js"`) {
		t.Errorf("index does not name the versioned app.js: %s", html)
	}
	if regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]`).MatchString(html) || strings.Contains(html, "style=") {
		t.Errorf("index has inline code: %s", html)
	}
	if res := get(t, s.Handler(), http.MethodPost, "/"); res.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %d, want 405", res.Code)
	}
}

func TestAssetsAreVersionedTypedAndImmutable(t *testing.T) {
	t.Parallel()
	s := testFS(t, true)
	base := "/assets/" + s.Version()
	for _, c := range []struct{ path, ctype string }{
		{"/js/app.js", "text/javascript; charset=utf-8"},
		{"/css/console.css", "text/css; charset=utf-8"},
		{"/icon.svg", "image/svg+xml"},
		{"/vendor/hls.min.js", "text/javascript; charset=utf-8"},
		{"/odd.bin", "application/octet-stream"},
	} {
		res := get(t, s.Handler(), http.MethodGet, base+c.path)
		if res.Code != http.StatusOK || res.Header().Get("Content-Type") != c.ctype ||
			res.Header().Get("Cache-Control") != cacheImmutable || res.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: %d %q %q", c.path, res.Code, res.Header().Get("Content-Type"), res.Header().Get("Cache-Control"))
		}
	}
	for _, p := range []string{
		"/assets/0000000000000000/js/app.js",                        // another version
		base + "/pages/index.html", base + "/pages/not-an-asset.js", // templates are not assets
		base + "/js/../js/app.js", base + "//js/app.js", base + "/", base + "/nope.js",
	} {
		if res := get(t, s.Handler(), http.MethodGet, p); res.Code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, res.Code)
		}
	}
	// Revalidation, HEAD, gzip.
	res := get(t, s.Handler(), http.MethodGet, base+"/js/app.js")
	etag := res.Header().Get("ETag")
	if res := get(t, s.Handler(), http.MethodGet, base+"/js/app.js", "If-None-Match", etag); res.Code != http.StatusNotModified {
		t.Errorf("If-None-Match: %d, want 304", res.Code)
	}
	if res := get(t, s.Handler(), http.MethodHead, base+"/js/app.js"); res.Code != http.StatusOK || body(t, res) != "" {
		t.Errorf("HEAD: %d", res.Code)
	}
	res = get(t, s.Handler(), http.MethodGet, base+"/js/app.js", "Accept-Encoding", "br, gzip")
	if res.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("no gzip: %v", res.Header())
	}
	zr, err := gzip.NewReader(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	plainBody, _ := io.ReadAll(zr)
	if !bytes.Equal(plainBody, s.assets["js/app.js"].body) {
		t.Error("gzip body differs from the file")
	}
	if res := get(t, s.Handler(), http.MethodGet, base+"/js/app.js", "Accept-Encoding", "gzip;q=0"); res.Header().Get("Content-Encoding") != "" {
		t.Error("gzip;q=0 got gzip")
	}
}

func TestNotBuiltAnswers503(t *testing.T) {
	t.Parallel()
	s := testFS(t, false)
	if s.Built() || len(s.Missing()) != len(vendorFiles) {
		t.Fatalf("Built %v, Missing %v", s.Built(), s.Missing())
	}
	for _, h := range []struct {
		h    http.Handler
		path string
	}{
		{s.Handler(), "/"},
		{s.Handler(), "/assets/" + s.Version() + "/vendor/hls.min.js"},
		{s.Assets(), "/assets/" + s.Version() + "/vendor/dash.mediaplayer.min.js"},
		{s.Watch(Player{ID: "abc"}), "/"},
	} {
		res := get(t, h.h, http.MethodGet, h.path)
		if b := body(t, res); res.Code != http.StatusServiceUnavailable || !strings.Contains(b, "run make console") {
			t.Errorf("%s: %d %q, want 503 saying run make console", h.path, res.Code, b)
		}
	}
	// Our own files are still served.
	if res := get(t, s.Handler(), http.MethodGet, "/assets/"+s.Version()+"/js/app.js"); res.Code != http.StatusOK {
		t.Errorf("app.js without vendor files: %d", res.Code)
	}
}

func TestWatchPage(t *testing.T) {
	t.Parallel()
	s := testFS(t, true)
	w := s.Watch(Player{ID: "6740a1c2e4b1f3a9c2000001", Name: `<lobby & "co">`, InitialLiveManifestSize: 2, LiveSyncDurationCount: 5})
	res := get(t, w, http.MethodGet, "/")
	html := body(t, res)
	if res.Code != http.StatusOK || res.Header().Get("Content-Security-Policy") != watchCSP || res.Header().Get("Cache-Control") != cachePage {
		t.Fatalf("watch: %d %v", res.Code, res.Header())
	}
	for _, want := range []string{
		`data-initial-live-manifest-size="2"`, `data-live-sync-duration-count="5"`, `data-format="hls"`,
		`data-src="/hls/6740a1c2e4b1f3a9c2000001/6740a1c2e4b1f3a9c2000001/index.m3u8"`,
		`/vendor/hls.min.js`, `&lt;lobby &amp; &#34;co&#34;&gt;`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("watch page lacks %s:\n%s", want, html)
		}
	}
	html = body(t, get(t, w, http.MethodGet, "/?format=dash"))
	if !strings.Contains(html, `index.mpd"`) || !strings.Contains(html, "dash.mediaplayer.min.js") || strings.Contains(html, "hls.min.js") {
		t.Errorf("dash watch page:\n%s", html)
	}
	if res := get(t, w, http.MethodGet, "/?format=smooth"); res.Code != http.StatusBadRequest {
		t.Errorf("format=smooth: %d, want 400", res.Code)
	}
	if res := get(t, w, http.MethodPut, "/"); res.Code != http.StatusMethodNotAllowed {
		t.Errorf("PUT: %d, want 405", res.Code)
	}
}

// TestEmbedded reads the real embedded folder: its pages parse and every script the pages
// name exists (the vendor files only once make console ran, which make test does first).
func TestEmbedded(t *testing.T) {
	t.Parallel()
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if !s.Built() {
		t.Fatalf("vendor files missing %v: run make console (make test does)", s.Missing())
	}
	pages := body(t, get(t, s.Handler(), http.MethodGet, "/")) +
		body(t, get(t, s.Watch(Player{ID: "x"}), http.MethodGet, "/")) +
		body(t, get(t, s.Watch(Player{ID: "x"}), http.MethodGet, "/?format=dash"))
	refs := regexp.MustCompile(`(?:src|href|data-hls-worker)="(/assets/[^"]+)"`).FindAllStringSubmatch(pages, -1)
	if len(refs) < 6 {
		t.Fatalf("only %d asset references in the pages", len(refs))
	}
	for _, m := range refs {
		if res := get(t, s.Handler(), http.MethodGet, m[1]); res.Code != http.StatusOK {
			t.Errorf("%s: %d", m[1], res.Code)
		}
	}
}

// TestFirstLoadBudget: what the console loads before it shows anything (its page, stylesheet
// and every script of ours, hls.js and dash.js aside) stays under 300 KB gzipped.
func TestFirstLoadBudget(t *testing.T) {
	t.Parallel()
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	total := len(s.index)
	for name, a := range s.assets {
		if strings.HasPrefix(name, "vendor/") {
			continue
		}
		if gz := a.gzipped(); gz != nil {
			total += len(gz)
		} else {
			total += len(a.body)
		}
	}
	t.Logf("console first load: %d bytes gzipped (without hls.js and dash.js)", total)
	if total > 300_000 {
		t.Errorf("console first load is %d bytes gzipped, over the 300 KB budget", total)
	}
}
