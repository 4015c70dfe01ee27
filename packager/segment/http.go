package segment

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// Cache-Control values of playback responses.
const (
	// CachePlaylist is for playlists and manifests that may not be reused at all: an HTTP
	// cache revalidates them on every request (PlaylistCache of less than a second).
	CachePlaylist = "no-cache"
	// CacheImmutable is for init segments and segments: their names are never reused (a
	// store's id is in them), so a cache may keep them for as long as it likes.
	CacheImmutable = "public, max-age=31536000, immutable"
)

// BlockingReuse is how many target durations the answer to a blocking playlist reload
// (_HLS_msn) may be reused: its URL names the segment or part it waited for, so a later
// answer to the same URL would only list more, and a player asks each URL once. Apple's
// Low-Latency HLS guidance for CDNs recommends six target durations.
const BlockingReuse = 6

// PlaylistCache is the Cache-Control of a playlist or manifest that stays good enough for
// d: shared caches (nginx, a CDN) and browsers may reuse it for d rounded down to whole
// seconds, the unit of max-age. Under a second it is CachePlaylist. Callers pass half a
// segment for a classic playlist, a part for a low-latency one.
func PlaylistCache(d time.Duration) string {
	s := int64(d / time.Second)
	if s < 1 {
		return CachePlaylist
	}
	n := strconv.FormatInt(s, 10)
	return "public, max-age=" + n + ", s-maxage=" + n
}

// SetCORS lets pages of any origin fetch playback files, and read the headers players need.
func SetCORS(h http.Header) {
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Expose-Headers", "Content-Length, Content-Range, Date")
}

// Preflight answers a CORS preflight (OPTIONS) and reports whether r was one; it refuses
// methods other than GET, HEAD and OPTIONS with 405 and reports true for them too.
func Preflight(w http.ResponseWriter, r *http.Request) bool {
	h := w.Header()
	SetCORS(h)
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		return false
	case http.MethodOptions:
		h.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Range, If-None-Match, If-Modified-Since, Origin, Accept")
		h.Set("Access-Control-Max-Age", "86400")
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	h.Set("Allow", "GET, HEAD, OPTIONS")
	writeError(w, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", fmt.Sprintf("method %s is not allowed here", r.Method))
	return true
}

// ServeContent serves an immutable file with Range and conditional requests (see
// http.ServeContent) and the given type and caching.
func ServeContent(w http.ResponseWriter, r *http.Request, ctype, cache string, modtime time.Time, content io.ReadSeeker) {
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Cache-Control", cache)
	http.ServeContent(w, r, "", modtime, content)
}

// NotFound answers 404 with the API's error body.
func NotFound(w http.ResponseWriter, msg string) {
	writeError(w, http.StatusNotFound, "NOT_FOUND", msg)
}

// WarmingUp answers the playlist request of a player with fewer than want segments: 404 with
// a body that says how far it is.
func WarmingUp(w http.ResponseWriter, id string, have int64, want int) {
	w.Header().Set("Cache-Control", "no-store")
	NotFound(w, fmt.Sprintf("player %s is warming up: %d of %d segments ready", id, have, want))
}

type errorBody struct {
	Success bool `json:"success"`
	Error   struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	var b errorBody
	b.Error.Code, b.Error.Message = code, msg
	data, _ := json.Marshal(b)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if h.Get("Cache-Control") == "" {
		h.Set("Cache-Control", "no-cache")
	}
	w.WriteHeader(status)
	_, _ = w.Write(append(data, '\n'))
}

// Concat returns a ReadSeeker over the concatenation of parts, without copying them: a DASH
// segment is a track's header followed by its bytes in the shared segment.
func Concat(parts ...[]byte) io.ReadSeeker {
	var n int64
	for _, p := range parts {
		n += int64(len(p))
	}
	return io.NewSectionReader(concat(parts), 0, n)
}

type concat [][]byte

func (c concat) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for _, part := range c {
		if off >= int64(len(part)) {
			off -= int64(len(part))
			continue
		}
		k := copy(p[n:], part[off:])
		n += k
		off = 0
		if n == len(p) {
			return n, nil
		}
	}
	return n, io.EOF
}
