// Package hls serves a live HLS media playlist (version 7, fMP4 segments) over a segment
// Store, as an http.Handler for one player.
//
// The handler answers by the last element of the request path, wherever it is mounted
// (players use /hls/<id>/<id>/): index.m3u8, init_<store>_<version>.mp4 and
// seg_<store>_<seq>.m4s. Owns tells a router which names are its own, so that HLS and DASH
// share one directory:
//
//	hh := hls.New(store, hls.Options{ID: id, InitialSegments: 3, LiveSyncCount: 3,
//		FragmentSize: 3 * time.Second, Window: 60 * time.Second})
//	dh := dash.New(store, dash.Options{...}) // or over its own store
//	func(w http.ResponseWriter, r *http.Request) {
//		switch name := path.Base(r.URL.Path); {
//		case hh.Owns(name):
//			hh.ServeHTTP(w, r)
//		case dh.Owns(name):
//			dh.ServeHTTP(w, r)
//		default:
//			http.NotFound(w, r)
//		}
//	}
package hls

import (
	"bytes"
	"context"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sluicemedia/sluice/packager/segment"
)

// Playlist and segment content types.
const (
	playlistType = "application/vnd.apple.mpegurl"
	videoType    = "video/mp4"
	audioType    = "audio/mp4"
)

// playlistName is the media playlist's file name.
const playlistName = "index.m3u8"

// Options configure a Handler; they are the player's HLS settings.
type Options struct {
	// Live is the player's settings the HLS and DASH handlers share; FragmentSize,
	// Window and PartTarget are the HLS ones. MaxWaiting counts the blocked playlist
	// requests and the waits for a partial segment alike.
	segment.Live
}

// aheadLimit is how far past the newest segment a blocking reload may ask: further is a 400
// (RFC 8216bis 6.2.5.2, "plus two").
const aheadLimit = 2

func (o Options) withDefaults() Options {
	o.Live = o.WithDefaults()
	return o
}

// Handler serves one player's HLS files from a Store. Safe for concurrent use.
type Handler struct {
	st      *segment.Store
	opts    Options
	cache   atomic.Pointer[rendered]
	llCache [2]atomic.Pointer[rendered] // low-latency: the full playlist and the delta update
	blocked atomic.Int64                // playlist requests waiting in waitFor
}

// rendered is the playlist of one store snapshot, made once and served to every client. It
// names the snapshot by its count of segments added rather than holding it, so that segments
// the store lets go are not kept alive by the cache.
type rendered struct {
	added int64
	parts int // partial segments of the segment in progress (low-latency)
	body  []byte
}

// New returns a Handler over st.
func New(st *segment.Store, opts Options) *Handler {
	return &Handler{st: st, opts: opts.withDefaults()}
}

// Blocked is the number of playlist requests waiting for a segment now.
func (h *Handler) Blocked() int { return int(h.blocked.Load()) }

// Owns tells whether a file name (the last element of a request path) is one of the
// handler's.
func (h *Handler) Owns(name string) bool {
	return name == playlistName || strings.HasPrefix(name, "init_") || strings.HasPrefix(name, "seg_") ||
		strings.HasPrefix(name, partPrefix)
}

// ServeHTTP serves the playlist, init segments and segments named by the request path's last
// element, with CORS and caching headers and Range support.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if segment.Preflight(w, r) {
		return
	}
	name := path.Base(r.URL.Path)
	switch {
	case name == playlistName && h.lowLatency():
		h.serveLowLatencyPlaylist(w, r)
	case name == playlistName:
		h.servePlaylist(w, r)
	case strings.HasPrefix(name, partPrefix) && strings.HasSuffix(name, ".m4s"):
		h.servePartial(w, r, name)
	case strings.HasPrefix(name, "init_") && strings.HasSuffix(name, ".mp4"):
		v, ok := h.number(strings.TrimSuffix(strings.TrimPrefix(name, "init_"), ".mp4"))
		in, found := h.st.Snapshot().Init(int(v))
		if !ok || !found {
			segment.NotFound(w, "no init segment "+name)
			return
		}
		segment.ServeContent(w, r, contentType(in), segment.CacheImmutable, in.Created, bytes.NewReader(in.Data))
	case strings.HasPrefix(name, "seg_") && strings.HasSuffix(name, ".m4s"):
		seq, ok := h.number(strings.TrimSuffix(strings.TrimPrefix(name, "seg_"), ".m4s"))
		s, found := h.st.Snapshot().Segment(seq)
		if !ok || !found {
			segment.NotFound(w, "no segment "+name+" (it may have left the window)")
			return
		}
		segment.ServeContent(w, r, contentType(s.Init), segment.CacheImmutable, s.Created, bytes.NewReader(s.Data))
	default:
		segment.NotFound(w, "no file "+name)
	}
}

// number parses "<store>_<n>" for this handler's store.
func (h *Handler) number(s string) (int64, bool) {
	id, n, ok := strings.Cut(s, "_")
	if !ok || id != h.st.ID() {
		return 0, false
	}
	v, err := strconv.ParseInt(n, 10, 64)
	return v, err == nil && v >= 0
}

func contentType(in *segment.Init) string {
	if in.HasVideo() {
		return videoType
	}
	return audioType
}

// servePlaylist answers with the playlist of the current snapshot, after waiting for the
// segment a blocking reload (_HLS_msn) asks for.
func (h *Handler) servePlaylist(w http.ResponseWriter, r *http.Request) {
	win := h.st.Snapshot()
	cache := segment.PlaylistCache(h.opts.FragmentSize / 2)
	if msn := r.URL.Query().Get("_HLS_msn"); msn != "" {
		n, err := strconv.ParseInt(msn, 10, 64)
		if err != nil || n < 0 {
			http.Error(w, "bad _HLS_msn", http.StatusBadRequest)
			return
		}
		newest := int64(-1)
		if s := win.Newest(); s != nil {
			newest = s.Seq
		}
		if n > newest+aheadLimit {
			http.Error(w, "_HLS_msn "+msn+" is more than "+strconv.Itoa(aheadLimit)+" segments past the newest ("+strconv.FormatInt(newest, 10)+")", http.StatusBadRequest)
			return
		}
		if n > newest {
			if h.blocked.Add(1) > int64(h.opts.MaxWaiting) {
				h.blocked.Add(-1)
				w.Header().Set("Retry-After", "1")
				http.Error(w, "too many blocked playlist requests (at most "+strconv.Itoa(h.opts.MaxWaiting)+")", http.StatusServiceUnavailable)
				return
			}
			win = h.waitFor(r.Context(), n)
			h.blocked.Add(-1)
		}
		if s := win.Newest(); s != nil && s.Seq >= n {
			cache = segment.PlaylistCache(segment.BlockingReuse * h.opts.FragmentSize)
		}
	}
	if win.Added < int64(h.opts.InitialSegments) || len(win.Segments) == 0 {
		segment.WarmingUp(w, h.opts.ID, win.Added, h.opts.InitialSegments)
		return
	}
	c := h.cache.Load()
	if c == nil || c.added != win.Added {
		c = &rendered{added: win.Added, body: h.appendPlaylist(nil, win)}
		h.cache.Store(c)
	}
	w.Header().Set("Content-Type", playlistType)
	w.Header().Set("Cache-Control", cache)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(c.body))
}

// waitFor waits until segment n exists, the block timeout passes or ctx ends, and returns the
// snapshot then.
func (h *Handler) waitFor(ctx context.Context, n int64) *segment.Window {
	timer := time.NewTimer(h.opts.WaitTimeout)
	defer timer.Stop()
	for {
		wait := h.st.Wait()
		win := h.st.Snapshot()
		if s := win.Newest(); s != nil && s.Seq >= n {
			return win
		}
		select {
		case <-wait:
		case <-timer.C:
			return h.st.Snapshot()
		case <-ctx.Done():
			return h.st.Snapshot()
		}
	}
}
