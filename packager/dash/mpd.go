package dash

import (
	"strconv"
	"strings"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/segment"
)

// appendMPD appends the manifest of the segments the window lists: one Period per timeline.
// h.mu is held.
func (h *Handler) appendMPD(b []byte, win *segment.Window, clock string) []byte {
	segs := win.Last(h.opts.Window)
	if h.ast.IsZero() {
		h.ast = segs[0].Timeline.DateTime.UTC().Truncate(time.Second)
	}
	var longest time.Duration
	for _, s := range segs {
		longest = max(longest, s.Duration)
	}
	b = append(b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-live:2011" type="dynamic"`...)
	b = attrTime(b, "availabilityStartTime", h.ast)
	b = attrTime(b, "publishTime", segs[len(segs)-1].Created)
	b = attrDuration(b, "minimumUpdatePeriod", h.updatePeriod())
	b = attrDuration(b, "timeShiftBufferDepth", h.opts.Window)
	b = attrDuration(b, "suggestedPresentationDelay", h.presentationDelay(longest))
	b = attrDuration(b, "minBufferTime", h.opts.FragmentSize)
	b = attrDuration(b, "maxSegmentDuration", longest)
	b = append(b, ">\n"...)
	b = h.appendServiceDescription(b)
	for start := 0; start < len(segs); {
		end := start + 1
		for end < len(segs) && segs[end].Timeline == segs[start].Timeline {
			end++
		}
		b = h.appendPeriod(b, segs[start:end], end == len(segs) && h.lowLatency())
		start = end
	}
	b = append(b, `  <UTCTiming schemeIdUri="urn:mpeg:dash:utc:http-iso:2014" value="`...)
	b = appendEscaped(b, clock)
	b = append(b, "\"/>\n</MPD>\n"...)
	return b
}

// appendPeriod appends the Period of one timeline's listed segments; with announce, each
// track's timeline also lists the segment after the newest (see appendTimeline).
func (h *Handler) appendPeriod(b []byte, segs []*segment.Segment, announce bool) []byte {
	tl := segs[0].Timeline
	in := segs[0].Init
	b = append(b, `  <Period id="p`...)
	b = strconv.AppendInt(b, tl.Seq, 10)
	b = append(b, '"')
	b = attrDuration(b, "start", max(tl.DateTime.Sub(h.ast), 0))
	b = append(b, ">\n"...)
	for i, t := range in.Tracks {
		b = h.appendAdaptationSet(b, segs, in, i, t, announce)
	}
	return append(b, "  </Period>\n"...)
}

// appendAdaptationSet appends the AdaptationSet of one track: its template, timeline and
// single Representation.
func (h *Handler) appendAdaptationSet(b []byte, segs []*segment.Segment, in *segment.Init, i int, t media.Track, announce bool) []byte {
	video := t.Codec.IsVideo()
	kind := "audio"
	if video {
		kind = "video"
	}
	b = append(b, `    <AdaptationSet id="`...)
	b = strconv.AppendInt(b, int64(t.ID), 10)
	b = append(b, `" contentType="`...)
	b = append(b, kind...)
	b = append(b, `" mimeType="`...)
	b = append(b, mimeType(video)...)
	b = append(b, `" segmentAlignment="true" startWithSAP="1">`+"\n"...)

	tl := segs[0].Timeline
	b = append(b, `      <SegmentTemplate timescale="`...)
	b = strconv.AppendInt(b, int64(t.ClockRate), 10)
	b = append(b, `" presentationTimeOffset="`...)
	b = strconv.AppendInt(b, media.Rescale(int64(tl.Origin), int(time.Second), t.ClockRate), 10)
	b = append(b, `" initialization="`...)
	b = h.appendName(b, int64(in.Version), t.ID)
	b = append(b, `init.mp4" media="`...)
	b = h.appendName(b, tl.Seq, t.ID)
	b = append(b, "$Time$.m4s\""...)
	b = h.appendAvailability(b)
	b = append(b, ">\n        <SegmentTimeline>\n"...)
	var bytes, ticks int64
	var last *segment.Segment
	b, bytes, ticks, last = appendTimeline(b, segs, t.ID, announce)
	b = append(b, "        </SegmentTimeline>\n      </SegmentTemplate>\n"...)

	b = append(b, `      <Representation id="`...)
	b = append(b, kind[0])
	b = strconv.AppendInt(b, int64(t.ID), 10)
	b = append(b, `" codecs="`...)
	b = append(b, in.Codecs[i]...)
	b = append(b, `" bandwidth="`...)
	bw := int64(1)
	if ticks > 0 {
		bw = max(bytes*8*int64(t.ClockRate)/ticks, 1)
	}
	b = strconv.AppendInt(b, bw, 10)
	b = append(b, '"')
	if video {
		b = appendVideoAttrs(b, t, last)
		return append(b, "/>\n    </AdaptationSet>\n"...)
	}
	rate := t.Params.SampleRate
	if rate <= 0 {
		rate = t.ClockRate
	}
	b = append(b, ` audioSamplingRate="`...)
	b = strconv.AppendInt(b, int64(rate), 10)
	b = append(b, "\">\n"+`        <AudioChannelConfiguration schemeIdUri="urn:mpeg:dash:23003:3:audio_channel_configuration:2011" value="`...)
	b = strconv.AppendInt(b, int64(max(t.Params.Channels, 1)), 10)
	return append(b, "\"/>\n      </Representation>\n    </AdaptationSet>\n"...)
}

// appendName appends the start of a file name: dash_<store>_<num>_<track>_.
func (h *Handler) appendName(b []byte, num int64, track int) []byte {
	b = append(b, filePrefix...)
	b = append(b, h.st.ID()...)
	b = append(b, '_')
	b = strconv.AppendInt(b, num, 10)
	b = append(b, '_')
	b = strconv.AppendInt(b, int64(track), 10)
	return append(b, '_')
}

// updatePeriod is the MPD's minimumUpdatePeriod: a fragment, or a part for low-latency
// players. A low-latency timeline lists the segment being written and no further, so a player
// learns of the next segment from a manifest fetched after it started; refreshing once a
// fragment, dash.js sometimes learned of it most of a fragment late, its buffer ran dry
// meanwhile and playback stalled (the latency bench: 10 stalls in 60 s with 2 s fragments).
// Once a part, it learns of it within a part, as hls.js does of parts from a blocking reload.
// presentationDelay is live_sync_duration_count fragments, or two of the longest segments when
// the source's key frames come further apart than that: a segment is available once complete,
// so a client that starts at the edge minus less than that may start inside the segment still
// being made and find nothing to fetch (see TestPresentationDelayLongGOP). Low-latency
// manifests publish segments part by part and keep the settings' delay.
func (h *Handler) presentationDelay(longest time.Duration) time.Duration {
	d := time.Duration(h.opts.LiveSyncCount) * h.opts.FragmentSize
	if h.lowLatency() {
		return d
	}
	return max(d, 2*longest)
}

func (h *Handler) updatePeriod() time.Duration {
	if h.lowLatency() {
		return h.opts.PartTarget
	}
	return h.opts.FragmentSize
}

// appendTimeline appends the S elements of a track's parts: t where the timeline does not
// follow on, r for repeats. It returns the bytes and ticks listed, and the last segment with
// a part of the track.
//
// With announce (low-latency players), it also lists the segment after the newest, as long as
// the newest (the last repeat goes up by one): that segment is the one being written, or about
// to be, and a player can only ask for a segment a SegmentTimeline lists, so without it
// dash.js would wait for the segment to be complete and listed, a whole segment behind its
// target. Its start is exact (segments follow on); its duration is a guess that the next
// manifest corrects (a segment ends at a key frame; audio parts vary by a frame).
func appendTimeline(b []byte, segs []*segment.Segment, track int, announce bool) (_ []byte, bytes, ticks int64, last *segment.Segment) {
	var t, d, end int64
	r := -1
	flush := func(withT bool) {
		if r < 0 {
			return
		}
		b = append(b, `          <S`...)
		if withT {
			b = append(b, ` t="`...)
			b = strconv.AppendInt(b, t, 10)
			b = append(b, '"')
		}
		b = append(b, ` d="`...)
		b = strconv.AppendInt(b, d, 10)
		b = append(b, '"')
		if r > 0 {
			b = append(b, ` r="`...)
			b = strconv.AppendInt(b, int64(r), 10)
			b = append(b, '"')
		}
		b = append(b, "/>\n"...)
	}
	withT := true
	for _, s := range segs {
		p, ok := s.Part(track)
		if !ok {
			continue
		}
		bytes += int64(p.Size())
		ticks += p.Duration
		last = s
		if r >= 0 && p.BaseTime == end && p.Duration == d {
			r++
			end += d
			continue
		}
		flush(withT)
		withT = r < 0 || p.BaseTime != end
		t, d, r, end = p.BaseTime, p.Duration, 0, p.BaseTime+p.Duration
	}
	if announce && r >= 0 {
		r++
	}
	flush(withT)
	return b, bytes, ticks, last
}

// appendVideoAttrs appends width, height and the frame rate measured on the newest part.
func appendVideoAttrs(b []byte, t media.Track, last *segment.Segment) []byte {
	if t.Params.Width > 0 && t.Params.Height > 0 {
		b = append(b, ` width="`...)
		b = strconv.AppendInt(b, int64(t.Params.Width), 10)
		b = append(b, `" height="`...)
		b = strconv.AppendInt(b, int64(t.Params.Height), 10)
		b = append(b, `" sar="1:1"`...)
	}
	if last == nil {
		return b
	}
	if p, ok := last.Part(t.ID); ok && p.Duration > 0 && p.Samples > 1 {
		b = appendFrameRate(b, float64(p.Samples)*float64(t.ClockRate)/float64(p.Duration))
	}
	return b
}

// appendFrameRate appends frameRate as an integer, or N000/1001 for the NTSC rates.
func appendFrameRate(b []byte, fps float64) []byte {
	const eps = 0.02
	n := int64(fps + 0.5)
	ntsc := float64(n) * 1000 / 1001
	switch {
	case n > 0 && fps-float64(n) < eps && float64(n)-fps < eps:
		b = append(b, ` frameRate="`...)
		b = strconv.AppendInt(b, n, 10)
	case n > 0 && fps-ntsc < eps && ntsc-fps < eps:
		b = append(b, ` frameRate="`...)
		b = strconv.AppendInt(b, n*1000, 10)
		b = append(b, "/1001"...)
	default:
		return b
	}
	return append(b, '"')
}

// attrTime appends name="<ISO 8601 UTC time with milliseconds>".
func attrTime(b []byte, name string, t time.Time) []byte {
	b = append(b, ' ')
	b = append(b, name...)
	b = append(b, `="`...)
	b = t.UTC().AppendFormat(b, isoMillis)
	return append(b, '"')
}

// attrDuration appends name="PTnS" (xs:duration in seconds, up to milliseconds).
func attrDuration(b []byte, name string, d time.Duration) []byte {
	b = append(b, ' ')
	b = append(b, name...)
	b = append(b, `="PT`...)
	ms := int64((d + time.Millisecond/2) / time.Millisecond)
	b = strconv.AppendInt(b, ms/1000, 10)
	if f := ms % 1000; f != 0 {
		s := strconv.FormatInt(1000+f, 10)[1:] // three digits
		b = append(b, '.')
		b = append(b, strings.TrimRight(s, "0")...)
	}
	return append(b, `S"`...)
}

// xmlEscaper escapes text for an attribute value.
var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")

func appendEscaped(b []byte, s string) []byte {
	return append(b, xmlEscaper.Replace(s)...)
}
