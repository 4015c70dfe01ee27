package events

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// moduleNames maps the module names a filter may use (the API's path names too) to the
// module names events carry.
var moduleNames = map[string]string{
	"vod": "MODULE_VOD", "restream": "MODULE_RESTREAM", "recording": "MODULE_RECORDING",
	"srt-servers": "MODULE_SRT_SERVERS", "rtmp-servers": "MODULE_RTMP_SERVERS", "webhooks": "MODULE_WEBHOOKS",
	"MODULE_VOD": "MODULE_VOD", "MODULE_RESTREAM": "MODULE_RESTREAM", "MODULE_RECORDING": "MODULE_RECORDING",
	"MODULE_SRT_SERVERS": "MODULE_SRT_SERVERS", "MODULE_RTMP_SERVERS": "MODULE_RTMP_SERVERS",
	"MODULE_WEBHOOKS": "MODULE_WEBHOOKS", ServerModule: ServerModule,
}

var objectID = regexp.MustCompile(`^[0-9a-f]{24}$`)

// replayPage is how many stored events one read of the history returns.
const replayPage = 500

// maxQuery bounds the query string of a stream request.
const maxQuery = 2048

// ServeHTTP serves the event stream (GET /api/events; the API checks the token first). Query:
// module (MODULE_VOD or vod, ...), id (a record id), type (comma-separated types), and
// last_event_id, which, like the Last-Event-ID header, replays the stored events after it
// before the live ones.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if len(r.URL.RawQuery) > maxQuery {
		writeError(w, http.StatusBadRequest, "VALIDATION", "", "the query is longer than 2048 bytes")
		return
	}
	q := r.URL.Query()
	var f filter
	if m := q.Get("module"); m != "" {
		if f.module = moduleNames[m]; f.module == "" {
			writeError(w, http.StatusBadRequest, "VALIDATION", "module", fmt.Sprintf("module %q is not a module (vod, restream, recording, srt-servers, rtmp-servers, webhooks or MODULE_API)", m))
			return
		}
	}
	if id := q.Get("id"); id != "" {
		if !objectID.MatchString(id) && id != ServerID {
			writeError(w, http.StatusBadRequest, "VALIDATION", "id", fmt.Sprintf("id %q is not an id of 24 hexadecimal digits", id))
			return
		}
		f.id = id
	}
	if ts := q.Get("type"); ts != "" {
		f.types = map[string]bool{}
		for t := range strings.SplitSeq(ts, ",") {
			if t = strings.TrimSpace(t); !IsStored(t) && t != ServerStats {
				writeError(w, http.StatusBadRequest, "VALIDATION", "type", fmt.Sprintf("type %q is not an event type", t))
				return
			}
			f.types[t] = true
		}
	}
	after, replay := int64(0), false
	raw := r.Header.Get("Last-Event-ID")
	if v := q.Get("last_event_id"); v != "" {
		raw = v
	}
	if raw = strings.TrimSpace(raw); raw != "" {
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "VALIDATION", "last_event_id", fmt.Sprintf("last event id %q is not a whole number", raw))
			return
		}
		after, replay = n, true
	}
	sub, err := h.subscribe(f)
	if err != nil {
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusServiceUnavailable, "UNAVAILABLE", "", err.Error()+"; try again later")
		return
	}
	defer h.unsubscribe(sub)

	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	hd.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	send := func(b []byte) bool {
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	// retry: how long an EventSource waits before it reconnects.
	if !send([]byte("retry: 2000\n: sluice event stream\n\n")) {
		return
	}
	if replay && !h.replay(r.Context(), sub, after, send) {
		return
	}
	keep := time.NewTicker(h.opts.KeepAlive)
	defer keep.Stop()
	for {
		select {
		case fr, ok := <-sub.ch:
			if !ok {
				h.mu.Lock()
				reason := sub.reason
				h.mu.Unlock()
				if reason != "" {
					send([]byte(": closed: " + reason + "\n\n"))
				}
				return
			}
			if !send(fr) {
				return
			}
		case <-keep.C:
			if !send([]byte(": keep-alive\n\n")) {
				return
			}
		case <-r.Context().Done():
			return
		}
	}
}

// replay sends the stored events after after up to the subscriber's start, those its filter
// wants; a comment says when the history no longer holds some of them.
func (h *Hub) replay(ctx context.Context, sub *subscriber, after int64, send func([]byte) bool) bool {
	if after >= sub.start {
		return true
	}
	oldest, err := h.store.OldestEventID(ctx)
	if err != nil {
		return send([]byte(": the history cannot be read now: " + oneLine(err.Error()) + "\n\n"))
	}
	if oldest == 0 || oldest > after+1 {
		first := oldest
		if first == 0 {
			first = sub.start + 1
		}
		if !send([]byte(": events " + itoa(after+1) + " to " + itoa(first-1) + " are no longer in the history\n\n")) {
			return false
		}
	}
	for after < sub.start {
		evs, err := h.store.EventsAfter(ctx, after, replayPage)
		if err != nil {
			return send([]byte(": the history cannot be read now: " + oneLine(err.Error()) + "\n\n"))
		}
		if len(evs) == 0 {
			return true
		}
		for _, e := range evs {
			if e.ID > sub.start {
				return true
			}
			after = e.ID
			if sub.f.match(e.Type, string(e.Module), e.RecordID) && !send(frame(e.ID, e.Type, e.Doc)) {
				return false
			}
		}
	}
	return true
}

func oneLine(s string) string { return strings.NewReplacer("\n", " ", "\r", " ").Replace(s) }

// writeError answers in the API's error shape (API.md).
func writeError(w http.ResponseWriter, status int, code, field, msg string) {
	e := map[string]any{"code": code, "message": msg}
	if field != "" {
		e["field"] = field
	}
	b, _ := json.Marshal(map[string]any{"success": false, "error": e})
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
