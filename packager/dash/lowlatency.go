package dash

import (
	"net/http"
	"strconv"
	"time"

	"github.com/sluicemedia/sluice/packager/segment"
)

// Low-latency DASH (LL-DASH) manifest marks, for players with a PartTarget, following the
// DASH-IF low-latency guidelines as dash.js reads them:
//
//   - SegmentTemplate availabilityTimeOffset: a segment may be requested this long before it
//     is complete, the segment duration minus one part duration (the first part is ready
//     one part after the segment starts);
//   - SegmentTemplate availabilityTimeComplete="false": the segment is still being written
//     when it becomes available, so a player must read it as a chunked stream;
//   - ServiceDescription with Latency target (milliseconds): 3 part durations + 500 ms (the
//     least behind the edge that the latency bench plays without a stall, as LL-HLS's
//     PART-HOLD-BACK is 3 part durations), with
//     min at half of it and max at twice it, and PlaybackRate 0.96..1.04 so a player's
//     catch-up stays inaudible;
//   - each SegmentTimeline lists the segment after the newest (appendTimeline): a player asks
//     only for listed segments, and the one it should be reading is the one being written.
//
// Classic players (PartTarget 0) get none of these: their manifest is byte-identical to the
// one before LL-DASH.

// lowLatency tells whether the handler serves the low-latency manifest.
func (h *Handler) lowLatency() bool { return h.opts.PartTarget > 0 }

// latencyTarget is the ServiceDescription's target latency: 3 part durations + 500 ms.
func (h *Handler) latencyTarget() time.Duration { return 3*h.opts.PartTarget + 500*time.Millisecond }

// appendServiceDescription appends the ServiceDescription of a low-latency manifest.
func (h *Handler) appendServiceDescription(b []byte) []byte {
	if !h.lowLatency() {
		return b
	}
	target := h.latencyTarget().Milliseconds()
	b = append(b, `  <ServiceDescription id="0">`+"\n"+`    <Latency referenceId="0" target="`...)
	b = strconv.AppendInt(b, target, 10)
	b = append(b, `" min="`...)
	b = strconv.AppendInt(b, target/2, 10)
	b = append(b, `" max="`...)
	b = strconv.AppendInt(b, target*2, 10)
	return append(b, `"/>`+"\n"+`    <PlaybackRate min="0.96" max="1.04"/>`+"\n  </ServiceDescription>\n"...)
}

// appendAvailability appends the SegmentTemplate attributes of a low-latency manifest.
func (h *Handler) appendAvailability(b []byte) []byte {
	if !h.lowLatency() {
		return b
	}
	offset := max(h.opts.FragmentSize-h.opts.PartTarget, 0)
	b = append(b, ` availabilityTimeOffset="`...)
	b = strconv.AppendFloat(b, offset.Seconds(), 'f', -1, 64)
	return append(b, `" availabilityTimeComplete="false"`...)
}

// Segments in progress. A low-latency player's request for the segment being written (the
// store's open segment) is answered at once with a chunked body: the track's bytes of the
// partial segments made so far, then those of each new one as the store publishes it, ending
// when the segment is complete. A request for the segment right after the newest one (not
// started yet) waits for it to start, like a blocking preload. Both count against
// Options.MaxWaiting (503 beyond) and end after Options.WaitTimeout: a wait with 503, a
// stream by aborting the response (the body is then incomplete, as when the publisher goes).
// The request's own goroutine does the writing: no goroutine per part.

// openStart returns the media time at which the open segment's part of track starts.
func openStart(s *segment.Segment, track int) (int64, bool) {
	for i := range s.Partials {
		for _, tf := range s.Partials[i].Tracks {
			if tf.Track == track {
				return tf.BaseTime, true
			}
		}
	}
	return 0, false
}

// coming tells whether the track's segment of timeline num starting at t is the open one, or
// the one right after the newest (complete or open) segment.
func (h *Handler) coming(win *segment.Window, num int64, track int, t int64) bool {
	if o := win.Open; o != nil && o.Timeline != nil && o.Timeline.Seq == num {
		if b, ok := openStart(o, track); ok && b == t {
			return true
		}
		return false // the next one starts after the open one: too far ahead
	}
	n := win.Newest()
	if n == nil || n.Timeline.Seq != num {
		return false
	}
	p, ok := n.Part(track)
	return ok && p.BaseTime+p.Duration == t
}

// find returns the segment of timeline num whose part of track starts at t, complete or
// open, and whether it is complete.
func find(win *segment.Window, num int64, track int, t int64) (s *segment.Segment, complete, ok bool) {
	for i := len(win.Segments) - 1; i >= 0; i-- {
		s := win.Segments[i]
		if s.Timeline.Seq != num {
			continue
		}
		if p, ok := s.Part(track); ok && p.BaseTime == t {
			return s, true, true
		}
	}
	if o := win.Open; o != nil && o.Timeline != nil && o.Timeline.Seq == num {
		if b, ok := openStart(o, track); ok && b == t {
			return o, false, true
		}
	}
	return nil, false, false
}

// serveStream streams the track's segment of timeline num starting at t as it is written.
func (h *Handler) serveStream(w http.ResponseWriter, r *http.Request, num int64, track int, t int64) {
	if h.streams.Add(1) > int64(h.opts.MaxWaiting) {
		h.streams.Add(-1)
		w.Header().Set("Retry-After", "1")
		http.Error(w, "too many low-latency segment requests (at most "+strconv.Itoa(h.opts.MaxWaiting)+")", http.StatusServiceUnavailable)
		return
	}
	defer h.streams.Add(-1)
	timer := time.NewTimer(h.opts.WaitTimeout)
	defer timer.Stop()
	rc := http.NewResponseController(w)
	sent := 0 // pieces of TrackData written
	for {
		wait := h.st.Wait()
		win := h.st.Snapshot()
		s, complete, ok := find(win, num, track, t)
		switch {
		case ok:
			pieces, _ := s.TrackData(track)
			if sent == 0 {
				mime := mimeType(s.Init.Tracks[s.Init.Index(track)].Codec.IsVideo())
				if complete {
					segment.ServeContent(w, r, mime, segment.CacheImmutable, s.Created, segment.Concat(pieces...))
					return
				}
				w.Header().Set("Content-Type", mime)
				w.Header().Set("Cache-Control", "no-store")
				w.WriteHeader(http.StatusOK)
			}
			if sent > len(pieces) {
				panic(http.ErrAbortHandler) // not the segment streamed so far
			}
			for _, p := range pieces[sent:] {
				if _, err := w.Write(p); err != nil {
					return
				}
			}
			sent = len(pieces)
			if complete {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		case sent > 0:
			panic(http.ErrAbortHandler) // the segment went without completing (publisher gone)
		case !h.coming(win, num, track, t):
			segment.NotFound(w, "no segment at "+strconv.FormatInt(t, 10)+" (it may have left the window)")
			return
		}
		select {
		case <-wait:
		case <-timer.C:
			if sent > 0 {
				panic(http.ErrAbortHandler)
			}
			w.Header().Set("Retry-After", "1")
			http.Error(w, "segment at "+strconv.FormatInt(t, 10)+" did not start within "+h.opts.WaitTimeout.String(), http.StatusServiceUnavailable)
			return
		case <-r.Context().Done():
			return
		}
	}
}
