package hls

import (
	"strconv"
	"time"

	"github.com/sluicemedia/sluice/packager/segment"
)

// skipTargets is CAN-SKIP-UNTIL in target durations: the least RFC 8216bis 4.4.3.8 allows
// (six).
const skipTargets = 6

// appendLowLatencyPlaylist appends the low-latency media playlist (version 9) of the window:
// the classic playlist's segments, the partial segments of those ending within three target
// durations of the live edge and of the segment in progress, and a preload hint for the next
// partial segment. With skip (a delta update, _HLS_skip=YES) the segments more than
// CAN-SKIP-UNTIL from the end are replaced by one EXT-X-SKIP tag, the rest of the text being
// that of the full playlist. EXT-X-START is left out: PART-HOLD-BACK tells players where to
// start.
func (h *Handler) appendLowLatencyPlaylist(b []byte, win *segment.Window, skip bool) []byte {
	segs := win.Last(h.opts.Window)
	target, independent := targetDuration(segs)
	targetDur := time.Duration(target) * time.Second
	b = append(b, "#EXTM3U\n#EXT-X-VERSION:9\n#EXT-X-TARGETDURATION:"...)
	b = strconv.AppendInt(b, target, 10)
	b = append(b, "\n#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,CAN-SKIP-UNTIL="...)
	b = appendSeconds(b, skipTargets*targetDur)
	// The parts' real longest duration (whole frames within Options.PartTarget), once the
	// segmenter knows it: the hold-back is three of them.
	part := h.opts.PartTarget
	if win.PartTarget > 0 {
		part = win.PartTarget
	}
	// In whole milliseconds, rounded up: no part's printed duration exceeds it, and the
	// printed hold-back is exactly three of it.
	part = (part + time.Millisecond - 1) / time.Millisecond * time.Millisecond
	b = append(b, ",PART-HOLD-BACK="...)
	b = appendSeconds(b, 3*part)
	b = append(b, "\n#EXT-X-PART-INF:PART-TARGET="...)
	b = appendSeconds(b, part)
	b = appendSequences(b, segs, independent)

	last := segs[len(segs)-1]
	edge := last.End()
	if o := win.Open; o != nil && o.Seq == last.Seq+1 {
		edge = o.End()
	}
	first := 0
	if skip {
		// Segments that end CAN-SKIP-UNTIL or more before the live edge may be skipped.
		for first < len(segs) && edge-segs[first].End() >= skipTargets*targetDur {
			first++
		}
		if first > 0 {
			b = append(b, "#EXT-X-SKIP:SKIPPED-SEGMENTS="...)
			b = strconv.AppendInt(b, int64(first), 10)
			b = append(b, '\n')
		}
	}
	id := h.st.ID()
	for i := first; i < len(segs); i++ {
		s := segs[i]
		var prev *segment.Segment
		if i > 0 {
			prev = segs[i-1]
		}
		b = h.appendSegmentHead(b, s, prev)
		if edge-s.End() < 3*targetDur {
			b = appendParts(b, id, s)
		}
		b = append(b, "#EXTINF:"...)
		b = appendSegmentLine(b, id, s)
	}
	if o := win.Open; o != nil && o.Seq == last.Seq+1 {
		b = h.appendSegmentHead(b, o, last)
		b = appendParts(b, id, o)
	}
	seq, index := nextPart(win)
	b = append(b, `#EXT-X-PRELOAD-HINT:TYPE=PART,URI="`...)
	b = appendPartName(b, id, seq, index)
	b = append(b, "\"\n"...)
	return b
}

// appendSegmentHead appends the tags that stand before a segment's parts and EXTINF: the
// discontinuity (not before the first), the init segment when it changes, the date.
func (h *Handler) appendSegmentHead(b []byte, s, prev *segment.Segment) []byte {
	if prev != nil && s.Discontinuity {
		b = append(b, "#EXT-X-DISCONTINUITY\n"...)
	}
	if prev == nil || s.Init != prev.Init {
		b = append(b, `#EXT-X-MAP:URI="init_`...)
		b = append(b, h.st.ID()...)
		b = append(b, '_')
		b = strconv.AppendInt(b, int64(s.Init.Version), 10)
		b = append(b, ".mp4\"\n"...)
	}
	b = append(b, "#EXT-X-PROGRAM-DATE-TIME:"...)
	b = s.ProgramDateTime.UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
	return append(b, '\n')
}

// appendParts appends the EXT-X-PART tags of a segment's partial segments.
func appendParts(b []byte, id string, s *segment.Segment) []byte {
	for i := range s.Partials {
		p := &s.Partials[i]
		b = append(b, "#EXT-X-PART:DURATION="...)
		b = appendSeconds(b, p.Duration)
		b = append(b, `,URI="`...)
		b = appendPartName(b, id, s.Seq, p.Index)
		b = append(b, '"')
		if p.Independent {
			b = append(b, ",INDEPENDENT=YES"...)
		}
		b = append(b, '\n')
	}
	return b
}

// appendPartName appends the file name of a partial segment.
func appendPartName(b []byte, id string, seq int64, index int) []byte {
	b = append(b, partPrefix...)
	b = append(b, id...)
	b = append(b, '_')
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, '_')
	b = strconv.AppendInt(b, int64(index), 10)
	return append(b, ".m4s"...)
}
