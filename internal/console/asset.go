package console

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
)

// contentTypes are the types of the files the console ships; anything else is served as
// application/octet-stream (and X-Content-Type-Options: nosniff keeps the browser to it).
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".mjs":  "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
	".png":  "image/png",
	".json": "application/json",
	".txt":  "text/plain; charset=utf-8",
	".md":   "text/plain; charset=utf-8",
}

// compressible are the types worth gzipping.
var compressible = map[string]bool{".html": true, ".js": true, ".mjs": true, ".css": true, ".svg": true, ".json": true, ".txt": true, ".md": true}

// asset is one embedded file, with its gzip form made on first request.
type asset struct {
	name  string
	body  []byte
	ctype string
	etag  string
	zip   bool

	once sync.Once
	gz   []byte
}

func newAsset(name string, body []byte) *asset {
	ext := strings.ToLower(path.Ext(name))
	ct, ok := contentTypes[ext]
	if !ok {
		ct = "application/octet-stream"
	}
	sum := sha256.Sum256(body)
	return &asset{name: name, body: body, ctype: ct, etag: `"` + hex.EncodeToString(sum[:8]) + `"`, zip: compressible[ext]}
}

// gzipped returns the gzip form of the body, or nil when it does not pay.
func (a *asset) gzipped() []byte {
	a.once.Do(func() {
		if !a.zip || len(a.body) < 1024 {
			return
		}
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		_, _ = zw.Write(a.body)
		_ = zw.Close()
		if b.Len() < len(a.body) {
			a.gz = b.Bytes()
		}
	})
	return a.gz
}

// serve writes the asset with the given Cache-Control, gzipped when the client takes it.
func (a *asset) serve(w http.ResponseWriter, r *http.Request, cache string) {
	h := w.Header()
	h.Set("Content-Type", a.ctype)
	h.Set("Cache-Control", cache)
	h.Set("ETag", a.etag)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Add("Vary", "Accept-Encoding")
	if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, a.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := a.body
	if gz := a.gzipped(); gz != nil && acceptsGzip(r) {
		body = gz
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Last-Modified", startTime)
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// startTime is the Last-Modified of every asset: embedded files change only with the binary.
var startTime = time.Now().UTC().Format(http.TimeFormat)

// acceptsGzip reports whether Accept-Encoding names gzip without q=0.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}
