package hls

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sluicemedia/sluice/packager/segment"
)

// Low-latency HLS (RFC 8216bis, Apple's LL-HLS) for a handler with Options.PartTarget: the
// store's segments carry partial segments (segment.SegmenterOptions.PartTarget) and the
// store publishes the segment in progress at each of them.
//
// The playlist lists the partial segments of the segments that end within three target
// durations of the live edge and of the segment in progress, hints the next one
// (EXT-X-PRELOAD-HINT), and answers blocking reloads (_HLS_msn, _HLS_part) the moment the
// part exists. Partial segments are served as part_<store>_<seq>_<index>.m4s; a request for
// one that does not exist yet but is about to (the hinted one, or the few after it) waits
// for it. Both kinds of waits count against Options.MaxWaiting, and both give up after
// Options.WaitTimeout with 503.

// partPrefix starts the file names of partial segments.
const partPrefix = "part_"

// lowLatency tells whether the handler serves the low-latency playlist.
func (h *Handler) lowLatency() bool { return h.opts.PartTarget > 0 }

// advanceParts is the Advance Part Limit of RFC 8216bis 6.2.5.2: how many parts past the
// last one a blocking request may ask for before it is a 400 (three seconds of parts, at
// least three).
func (h *Handler) advanceParts() int {
	return max(3, int((3*time.Second+h.opts.PartTarget-1)/h.opts.PartTarget))
}

// maxPartIndex bounds _HLS_part and partial segment indexes whatever else: a segment of the
// longest duration the segmenter allows (30 s, or four fragment sizes) holds fewer parts of
// at least 50 ms.
const maxPartIndex = 10_000

// parsePartQuery reads _HLS_msn and _HLS_part; part is -1 when absent. ok is false (and a
// 400 was written) when they are malformed: not numbers, negative, or _HLS_part alone.
func parsePartQuery(w http.ResponseWriter, r *http.Request) (msn int64, part int, given, ok bool) {
	q := r.URL.Query()
	ms, ps := q.Get("_HLS_msn"), q.Get("_HLS_part")
	if ms == "" {
		if ps != "" {
			http.Error(w, "_HLS_part without _HLS_msn", http.StatusBadRequest)
			return 0, 0, false, false
		}
		return 0, -1, false, true
	}
	msn, err := strconv.ParseInt(ms, 10, 64)
	if err != nil || msn < 0 {
		http.Error(w, "bad _HLS_msn", http.StatusBadRequest)
		return 0, 0, false, false
	}
	part = -1
	if ps != "" {
		p, err := strconv.Atoi(ps)
		if err != nil || p < 0 || p > maxPartIndex {
			http.Error(w, "bad _HLS_part", http.StatusBadRequest)
			return 0, 0, false, false
		}
		part = p
	}
	return msn, part, true, true
}

// newestSeq returns the number of the newest segment kept, or -1.
func newestSeq(win *segment.Window) int64 {
	if s := win.Newest(); s != nil {
		return s.Seq
	}
	return -1
}

// hasPart tells whether the window holds segment msn complete, or, when part >= 0, its
// partial segment part or anything later.
func hasPart(win *segment.Window, msn int64, part int) bool {
	if newestSeq(win) >= msn {
		return true
	}
	if part < 0 || win.Open == nil {
		return false
	}
	return win.Open.Seq > msn || win.Open.Seq == msn && len(win.Open.Partials) > part
}

// serveLowLatencyPlaylist answers a low-latency playlist request: at once, or for a blocking
// reload once the asked segment or part exists (503 after the block timeout).
func (h *Handler) serveLowLatencyPlaylist(w http.ResponseWriter, r *http.Request) {
	msn, part, block, ok := parsePartQuery(w, r)
	if !ok {
		return
	}
	win := h.st.Snapshot()
	if block {
		newest := newestSeq(win)
		if msn > newest+aheadLimit {
			http.Error(w, "_HLS_msn "+strconv.FormatInt(msn, 10)+" is more than "+strconv.Itoa(aheadLimit)+
				" segments past the newest ("+strconv.FormatInt(newest, 10)+")", http.StatusBadRequest)
			return
		}
		// A part of a later segment than the open one is at least its index plus one past the
		// last part (the open segment may close next), so the same limit holds for it.
		if o := win.Open; part >= 0 && o != nil && (msn == o.Seq && part >= len(o.Partials)+h.advanceParts() ||
			msn > o.Seq && part >= h.advanceParts()) {
			http.Error(w, "_HLS_part "+strconv.Itoa(part)+" is more than "+strconv.Itoa(h.advanceParts())+
				" parts past the last one", http.StatusBadRequest)
			return
		}
		if !hasPart(win, msn, part) {
			var reached bool
			win, reached, ok = h.block(w, r.Context(), func(win *segment.Window) bool { return hasPart(win, msn, part) })
			if !ok {
				return
			}
			if !reached {
				w.Header().Set("Retry-After", "1")
				http.Error(w, "segment "+strconv.FormatInt(msn, 10)+" part "+strconv.Itoa(part)+" not ready after "+
					h.opts.WaitTimeout.String(), http.StatusServiceUnavailable)
				return
			}
		}
	}
	if win.Added < int64(h.opts.InitialSegments) || len(win.Segments) == 0 {
		segment.WarmingUp(w, h.opts.ID, win.Added, h.opts.InitialSegments)
		return
	}
	skip := r.URL.Query().Get("_HLS_skip") == "YES"
	slot := &h.llCache[0]
	if skip {
		slot = &h.llCache[1]
	}
	parts := 0
	if win.Open != nil {
		parts = len(win.Open.Partials)
	}
	c := slot.Load()
	if c == nil || c.added != win.Added || c.parts != parts {
		c = &rendered{added: win.Added, parts: parts, body: h.appendLowLatencyPlaylist(nil, win, skip)}
		slot.Store(c)
	}
	// A blocking reload's answer holds what its URL asks for (segment.BlockingReuse); a
	// plain request, a player tuning in, wants the live edge: reusable for a part.
	cache := segment.PlaylistCache(h.opts.PartTarget)
	if block {
		cache = segment.PlaylistCache(segment.BlockingReuse * h.opts.FragmentSize)
	}
	w.Header().Set("Content-Type", playlistType)
	w.Header().Set("Cache-Control", cache)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(c.body))
}

// block waits, holding one of the MaxWaiting places, until done holds for a snapshot, the
// block timeout passes or the client goes. It returns the snapshot then and whether done
// held; ok is false when nothing more should be written: the cap was full (a 503 was
// written) or the client went.
func (h *Handler) block(w http.ResponseWriter, ctx context.Context, done func(*segment.Window) bool) (win *segment.Window, reached, ok bool) {
	if h.blocked.Add(1) > int64(h.opts.MaxWaiting) {
		h.blocked.Add(-1)
		w.Header().Set("Retry-After", "1")
		http.Error(w, "too many blocked requests (at most "+strconv.Itoa(h.opts.MaxWaiting)+")", http.StatusServiceUnavailable)
		return nil, false, false
	}
	defer h.blocked.Add(-1)
	timer := time.NewTimer(h.opts.WaitTimeout)
	defer timer.Stop()
	for {
		wait := h.st.Wait()
		win := h.st.Snapshot()
		if done(win) {
			return win, true, true
		}
		select {
		case <-wait:
		case <-timer.C:
			return h.st.Snapshot(), false, true
		case <-ctx.Done():
			return nil, false, false
		}
	}
}

// parsePartName reads "<store>_<seq>_<index>" for this handler's store.
func (h *Handler) parsePartName(s string) (seq int64, index int, ok bool) {
	id, rest, ok := strings.Cut(s, "_")
	if !ok || id != h.st.ID() {
		return 0, 0, false
	}
	n, i, ok := strings.Cut(rest, "_")
	if !ok {
		return 0, 0, false
	}
	seq, err1 := strconv.ParseInt(n, 10, 64)
	index, err2 := strconv.Atoi(i)
	return seq, index, err1 == nil && err2 == nil && seq >= 0 && index >= 0 && index <= maxPartIndex
}

// nextPart returns the partial segment the preload hint names: the next one of the segment
// in progress, or the first of the segment after the newest.
func nextPart(win *segment.Window) (int64, int) {
	if o := win.Open; o != nil {
		return o.Seq, len(o.Partials)
	}
	return newestSeq(win) + 1, 0
}

// partComing tells whether partial segment (seq, index) may still be made soon: it is at or
// after the next one and less than advance parts past it (a part of the segment after next
// counts from that segment's start).
func partComing(win *segment.Window, seq int64, index, advance int) bool {
	ns, ni := nextPart(win)
	switch seq {
	case ns:
		return index >= ni && index < ni+advance
	case ns + 1:
		return index < advance
	}
	return false
}

// servePartial serves a partial segment, waiting for it when it is about to be made.
func (h *Handler) servePartial(w http.ResponseWriter, r *http.Request, name string) {
	seq, index, ok := h.parsePartName(strings.TrimSuffix(strings.TrimPrefix(name, partPrefix), ".m4s"))
	if !ok || !h.lowLatency() {
		segment.NotFound(w, "no partial segment "+name)
		return
	}
	win := h.st.Snapshot()
	s, p, found := win.Partial(seq, index)
	if !found {
		if !partComing(win, seq, index, h.advanceParts()) {
			segment.NotFound(w, "no partial segment "+name+" (it may have left the window, or will not be made)")
			return
		}
		var reached bool
		win, reached, ok = h.block(w, r.Context(), func(win *segment.Window) bool {
			_, _, found := win.Partial(seq, index)
			return found || !partComing(win, seq, index, h.advanceParts())
		})
		if !ok {
			return
		}
		if s, p, found = win.Partial(seq, index); !found {
			if reached {
				segment.NotFound(w, "no partial segment "+name+": its segment ended before it")
				return
			}
			w.Header().Set("Retry-After", "1")
			http.Error(w, "partial segment "+name+" not ready after "+h.opts.WaitTimeout.String(), http.StatusServiceUnavailable)
			return
		}
	}
	segment.ServeContent(w, r, contentType(s.Init), segment.CacheImmutable, s.Created, bytes.NewReader(s.PartialData(p)))
}
