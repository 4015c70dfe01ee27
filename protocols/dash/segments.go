package dash

import (
	"math"
	"math/bits"
	"net/url"
	"strings"
	"time"

	"github.com/Eyevinn/dash-mpd/mpd"

	"github.com/sluicemedia/sluice/internal/media"
)

// maxTimeline bounds the segments expanded from one SegmentTimeline; a longer one keeps its
// latest segments (the live edge).
const maxTimeline = 20000

// template is a SegmentTemplate after inheritance: Period, then AdaptationSet, then
// Representation, each attribute overriding the one above it.
type template struct {
	media, init string
	timescale   uint64
	start, end  uint64
	pto         uint64
	duration    uint64
	timeline    *mpd.SegmentTimelineType
	hasStart    bool
}

func (t *template) merge(st *mpd.SegmentTemplateType) {
	if st == nil {
		return
	}
	if st.Media != "" {
		t.media = st.Media
	}
	if st.Initialization != "" {
		t.init = st.Initialization
	}
	if st.Timescale != nil && *st.Timescale > 0 {
		t.timescale = uint64(*st.Timescale)
	}
	if st.StartNumber != nil {
		t.start, t.hasStart = uint64(*st.StartNumber), true
	}
	if st.EndNumber != nil {
		t.end = uint64(*st.EndNumber)
	}
	if st.PresentationTimeOffset != nil {
		t.pto = *st.PresentationTimeOffset
	}
	if st.Duration != nil {
		t.duration = uint64(*st.Duration)
	}
	if st.SegmentTimeline != nil {
		t.timeline = st.SegmentTimeline
	}
}

// newRep resolves a representation's addressing; nil when it has no usable SegmentTemplate
// (SegmentBase and SegmentList are not supported).
func newRep(kind media.Kind, xp *mpd.Period, as *mpd.AdaptationSetType, xr *mpd.RepresentationType, base *url.URL, span time.Duration) *rep {
	if xr.SegmentBase != nil || xr.SegmentList != nil ||
		((as.SegmentBase != nil || as.SegmentList != nil) && xr.SegmentTemplate == nil) {
		return nil // the nearest addressing is not a template
	}
	t := template{timescale: 1, start: 1}
	t.merge(xp.SegmentTemplate)
	t.merge(as.SegmentTemplate)
	t.merge(xr.SegmentTemplate)
	if !t.hasStart {
		t.start = 1
	}
	if t.media == "" {
		return nil
	}
	r := &rep{kind: kind, id: xr.Id, bandwidth: xr.Bandwidth, codecs: xr.Codecs, base: base,
		init: t.init, media: t.media, timescale: t.timescale, start: t.start, end: t.end,
		pto: t.pto, duration: t.duration}
	if r.codecs == "" {
		r.codecs = as.Codecs
	}
	number := strings.Contains(t.media, "$Number")
	if t.timeline != nil {
		if !number && !strings.Contains(t.media, "$Time") {
			return nil
		}
		limit := uint64(0)
		if span > 0 {
			limit = satAdd(t.pto, toTimescale(span, t.timescale))
		}
		r.timeline = expandTimeline(t.timeline, t.start, limit)
		r.hasTimeline = true // possibly empty yet: a live presentation that just started
		return r
	}
	if t.duration == 0 || !number && !strings.Contains(t.media, "$Time") {
		return nil
	}
	return r
}

// expandTimeline lists the segments of a SegmentTimeline. An S with r = -1 repeats up to the
// next S's t, or up to limit (the period's end in the timescale; 0 when unknown, then once).
func expandTimeline(tl *mpd.SegmentTimelineType, startNumber, limit uint64) []seg {
	var out []seg
	var t uint64
	n := startNumber
	for i, s := range tl.S {
		if s == nil || s.D == 0 {
			continue
		}
		if s.T != nil {
			t = *s.T
		}
		count := uint64(1)
		switch {
		case s.R > 0:
			count += uint64(s.R)
		case s.R < 0:
			end := limit
			if i+1 < len(tl.S) && tl.S[i+1] != nil && tl.S[i+1].T != nil {
				end = *tl.S[i+1].T
			}
			if end > t {
				count = (end - t + s.D - 1) / s.D
			}
		}
		if count > maxTimeline {
			// Only the latest maxTimeline segments are kept: skip ahead.
			skip := count - maxTimeline
			hi, lo := bits.Mul64(skip, s.D)
			if hi != 0 || lo > math.MaxUint64-t {
				return out
			}
			t, n, count = t+lo, n+skip, maxTimeline
		}
		for range count {
			out = append(out, seg{t: t, d: s.D, n: n})
			if t > math.MaxUint64-s.D {
				return out
			}
			t += s.D
			n++
		}
		if len(out) > 2*maxTimeline {
			out = append(out[:0:0], out[len(out)-maxTimeline:]...)
		}
	}
	if len(out) > maxTimeline {
		out = out[len(out)-maxTimeline:]
	}
	return out
}

// segDuration returns the representation's (nominal) segment duration.
func (r *rep) segDuration() time.Duration {
	d := r.duration
	if len(r.timeline) > 0 {
		d = r.timeline[len(r.timeline)-1].d
	}
	if d == 0 {
		return 2 * time.Second // an empty timeline: a common segment duration until known
	}
	return fromTimescale(d, r.timescale)
}

// presentation returns where media time 0 of r lies on the presentation timeline, in 90 kHz
// ticks: the period's start minus the presentationTimeOffset.
func (r *rep) presentation(p *period) int64 {
	return p.start.Nanoseconds()*9/100000 - media.Rescale(int64(min(r.pto, math.MaxInt64)), int(min(r.timescale, math.MaxInt32)), 90000)
}

// url returns the address of a segment (or of the init segment, with zero vars).
func (r *rep) url(tmpl string, number, t uint64) (*url.URL, error) {
	s, err := expand(tmpl, tmplVars{repID: r.id, bandwidth: r.bandwidth, number: number, time: t})
	if err != nil {
		return nil, err
	}
	return r.base.Parse(s)
}

// toTimescale converts a duration to ticks of a timescale, saturating.
func toTimescale(d time.Duration, ts uint64) uint64 {
	if d <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(d), ts)
	if hi >= uint64(time.Second) {
		return math.MaxUint64
	}
	q, _ := bits.Div64(hi, lo, uint64(time.Second))
	return q
}

// fromTimescale converts ticks of a timescale to a duration, saturating.
func fromTimescale(v, ts uint64) time.Duration {
	if ts == 0 {
		return 0
	}
	hi, lo := bits.Mul64(v, uint64(time.Second))
	if hi >= ts {
		return time.Duration(math.MaxInt64)
	}
	q, _ := bits.Div64(hi, lo, ts)
	return time.Duration(min(q, math.MaxInt64))
}

func satMul(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 {
		return math.MaxUint64
	}
	return lo
}

func satAdd(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}
