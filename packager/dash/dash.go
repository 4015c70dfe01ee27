// Package dash serves a live MPEG-DASH manifest (dynamic MPD, isoff-live profile, one
// AdaptationSet per track with SegmentTemplate and SegmentTimeline) over a segment Store, as
// an http.Handler for one player.
//
// The handler answers by the last element of the request path, wherever it is mounted
// (players use /hls/<id>/<id>/index.mpd): index.mpd, time (the clock for UTCTiming),
// dash_<store>_<version>_<track>_init.mp4 and dash_<store>_<timeline>_<track>_<time>.m4s
// (the timeline is the Period's number: a source that restarts its clock after a gap repeats
// its times).
// Segments are single-track: a small per-track header in front of that track's bytes of the
// store's muxed segment, so HLS and DASH sharing one Store share the media in memory. Owns
// tells a router which names are its own; see package hls for serving both in one directory.
//
// Each timeline of the store (the segments between two input gaps) is a Period, whose start
// maps its first media time to the wall clock; a new Period follows every gap, with its own
// timeline and init segment.
package dash

import (
	"bytes"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicemedia/sluice/internal/opt"
	"github.com/sluicemedia/sluice/packager/segment"
)

// Names and types.
const (
	manifestName = "index.mpd"
	timeName     = "time"
	filePrefix   = "dash_"
	manifestType = "application/dash+xml"
)

// Options configure a Handler; they are the player's DASH settings.
type Options struct {
	// Live is the player's settings the HLS and DASH handlers share; FragmentSize,
	// Window and PartTarget are the DASH ones. WaitTimeout bounds a low-latency segment
	// request (the wait for it to start and its streaming); MaxWaiting is DASH's own cap,
	// apart from HLS's.
	segment.Live
	// Now is the clock of the time endpoint. Default time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	o.Live = o.WithDefaults()
	opt.Clock(&o.Now)
	return o
}

// Handler serves one player's DASH files from a Store. Safe for concurrent use.
type Handler struct {
	st   *segment.Store
	opts Options

	streams atomic.Int64 // low-latency segment requests waiting or streaming

	mu    sync.Mutex
	ast   time.Time // availabilityStartTime, fixed by the first manifest served
	cache rendered
}

// rendered is the manifest of one snapshot for one clock URL. It names the snapshot by its
// count of segments added rather than holding it, so that segments the store lets go are not
// kept alive by the cache.
type rendered struct {
	added int64
	clock string
	body  []byte
}

// New returns a Handler over st.
func New(st *segment.Store, opts Options) *Handler {
	return &Handler{st: st, opts: opts.withDefaults()}
}

// Owns tells whether a file name (the last element of a request path) is one of the
// handler's.
func (h *Handler) Owns(name string) bool {
	return name == manifestName || name == timeName || strings.HasPrefix(name, filePrefix)
}

// ServeHTTP serves the manifest, the clock, init segments and segments named by the request
// path's last element, with CORS and caching headers and Range support.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if segment.Preflight(w, r) {
		return
	}
	switch name := path.Base(r.URL.Path); {
	case name == manifestName:
		h.serveManifest(w, r)
	case name == timeName:
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write(h.opts.Now().UTC().AppendFormat(nil, isoMillis))
	case strings.HasPrefix(name, filePrefix):
		h.serveFile(w, r, name)
	default:
		segment.NotFound(w, "no file "+name)
	}
}

// isoMillis is an ISO 8601 UTC time with milliseconds.
const isoMillis = "2006-01-02T15:04:05.000Z"

// serveFile serves dash_<store>_<version>_<track>_init.mp4 or
// dash_<store>_<timeline>_<track>_<time>.m4s.
func (h *Handler) serveFile(w http.ResponseWriter, r *http.Request, name string) {
	f := strings.Split(strings.TrimPrefix(name, filePrefix), "_")
	if len(f) != 4 || f[0] != h.st.ID() {
		segment.NotFound(w, "no file "+name)
		return
	}
	num, err1 := strconv.ParseInt(f[1], 10, 64)
	track, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil {
		segment.NotFound(w, "no file "+name)
		return
	}
	win := h.st.Snapshot()
	if f[3] == "init.mp4" {
		in, ok := win.Init(int(num))
		i := -1
		if ok {
			i = in.Index(track)
		}
		if i < 0 {
			segment.NotFound(w, "no init segment "+name)
			return
		}
		segment.ServeContent(w, r, mimeType(in.Tracks[i].Codec.IsVideo()), segment.CacheImmutable, in.Created, bytes.NewReader(in.TrackData[i]))
		return
	}
	t, err := strconv.ParseInt(strings.TrimSuffix(f[3], ".m4s"), 10, 64)
	if err != nil || !strings.HasSuffix(f[3], ".m4s") {
		segment.NotFound(w, "no file "+name)
		return
	}
	for _, s := range win.Segments {
		if s.Timeline.Seq != num {
			continue
		}
		if p, ok := s.Part(track); ok && p.BaseTime == t {
			pieces, _ := s.TrackData(track)
			video := s.Init.Tracks[s.Init.Index(track)].Codec.IsVideo()
			segment.ServeContent(w, r, mimeType(video), segment.CacheImmutable, s.Created, segment.Concat(pieces...))
			return
		}
	}
	if h.lowLatency() && h.coming(win, num, track, t) {
		h.serveStream(w, r, num, track, t)
		return
	}
	segment.NotFound(w, "no segment "+name+" (it may have left the window)")
}

func mimeType(video bool) string {
	if video {
		return "video/mp4"
	}
	return "audio/mp4"
}

// serveManifest answers with the MPD of the current snapshot.
func (h *Handler) serveManifest(w http.ResponseWriter, r *http.Request) {
	win := h.st.Snapshot()
	if win.Added < int64(h.opts.InitialSegments) || len(win.Segments) == 0 {
		segment.WarmingUp(w, h.opts.ID, win.Added, h.opts.InitialSegments)
		return
	}
	clock := clockURL(r)
	h.mu.Lock()
	if h.cache.added != win.Added || h.cache.clock != clock || h.cache.body == nil {
		h.cache = rendered{added: win.Added, clock: clock, body: h.appendMPD(nil, win, clock)}
	}
	body := h.cache.body
	h.mu.Unlock()
	w.Header().Set("Content-Type", manifestType)
	w.Header().Set("Cache-Control", h.manifestCache())
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

// manifestCache is the manifest's Cache-Control: an HTTP cache in front may reuse it for half
// a segment, or for a low-latency player a part (segment.PlaylistCache).
func (h *Handler) manifestCache() string {
	if h.lowLatency() {
		return segment.PlaylistCache(h.opts.PartTarget)
	}
	return segment.PlaylistCache(h.opts.FragmentSize / 2)
}

// clockURL is the absolute URL of the time endpoint beside the manifest: players resolve a
// relative UTCTiming value against the page, not the manifest.
func clockURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p == "https" || p == "http" {
		scheme = p
	}
	return scheme + "://" + r.Host + path.Join(path.Dir(r.URL.Path), timeName)
}
