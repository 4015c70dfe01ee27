package hls

import (
	"strconv"
	"time"

	"github.com/sluicemedia/sluice/packager/segment"
)

// targetDuration is the target duration of a window's segments, whole seconds (EXTINF rounded
// to the nearest integer must not exceed it, RFC 8216 4.3.3.1), and whether every segment
// starts with a key frame.
func targetDuration(segs []*segment.Segment) (int64, bool) {
	var longest time.Duration
	independent := true
	for _, s := range segs {
		longest = max(longest, s.Duration)
		independent = independent && s.Key
	}
	ms := int64((longest + time.Millisecond/2) / time.Millisecond)
	return max((ms+999)/1000, 1), independent
}

// appendSequences appends the media and discontinuity sequence tags of segs, and
// EXT-X-INDEPENDENT-SEGMENTS when every segment starts with a key frame.
func appendSequences(b []byte, segs []*segment.Segment, independent bool) []byte {
	b = append(b, "\n#EXT-X-MEDIA-SEQUENCE:"...)
	b = strconv.AppendInt(b, segs[0].Seq, 10)
	b = append(b, "\n#EXT-X-DISCONTINUITY-SEQUENCE:"...)
	b = strconv.AppendInt(b, segs[0].DiscSeq, 10)
	b = append(b, '\n')
	if independent {
		b = append(b, "#EXT-X-INDEPENDENT-SEGMENTS\n"...)
	}
	return b
}

// appendSegmentLine appends the rest of a segment's EXTINF tag (its duration) and its URI.
func appendSegmentLine(b []byte, id string, s *segment.Segment) []byte {
	b = appendSeconds(b, s.Duration)
	b = append(b, ",\nseg_"...)
	b = append(b, id...)
	b = append(b, '_')
	b = strconv.AppendInt(b, s.Seq, 10)
	return append(b, ".m4s\n"...)
}

// appendPlaylist appends the media playlist (RFC 8216, version 7) of the segments the window
// lists. A discontinuity tag stands before every listed segment after a gap except the first:
// the discontinuity sequence counts the gaps up to the first listed segment.
func (h *Handler) appendPlaylist(b []byte, win *segment.Window) []byte {
	segs := win.Last(h.opts.Window)
	target, independent := targetDuration(segs)
	id := h.st.ID()
	b = append(b, "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:"...)
	b = strconv.AppendInt(b, target, 10)
	b = appendSequences(b, segs, independent)
	// EXT-X-START is a playlist tag (RFC 8216 4.3.5.2), once, before the first segment's
	// tags. In a live playlist its offset should not be within three target durations of the
	// end: live_sync_duration_count fragments back, or three targets if that is more.
	b = append(b, "#EXT-X-START:TIME-OFFSET=-"...)
	b = appendSeconds(b, max(time.Duration(h.opts.LiveSyncCount)*h.opts.FragmentSize, 3*time.Duration(target)*time.Second))
	b = append(b, ",PRECISE=NO\n"...)
	for i, s := range segs {
		if i > 0 && s.Discontinuity {
			b = append(b, "#EXT-X-DISCONTINUITY\n"...)
		}
		if i == 0 || s.Init != segs[i-1].Init {
			b = append(b, `#EXT-X-MAP:URI="init_`...)
			b = append(b, id...)
			b = append(b, '_')
			b = strconv.AppendInt(b, int64(s.Init.Version), 10)
			b = append(b, ".mp4\"\n"...)
		}
		b = append(b, "#EXT-X-PROGRAM-DATE-TIME:"...)
		b = s.ProgramDateTime.UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
		b = append(b, "\n#EXTINF:"...)
		b = appendSegmentLine(b, id, s)
	}
	return b
}

// appendSeconds appends d in seconds with three decimals (rounded to the millisecond).
func appendSeconds(b []byte, d time.Duration) []byte {
	ms := (d + time.Millisecond/2) / time.Millisecond
	b = strconv.AppendInt(b, int64(ms/1000), 10)
	b = append(b, '.')
	f := int64(ms % 1000)
	b = append(b, byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
	return b
}
