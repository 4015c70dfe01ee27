package dash

import (
	"bytes"
	"cmp"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/Eyevinn/dash-mpd/mpd"

	"github.com/sluicemedia/sluice/internal/media"
)

// maxMPDBytes bounds the MPD parseManifest accepts.
const maxMPDBytes = 4 << 20

// errNoRepresentation is returned for an MPD without a playable representation.
var errNoRepresentation = errors.New("no representation with a supported codec (H.264, H.265, AAC, MP3, Opus) and SegmentTemplate addressing")

// manifest is what a pull needs of one MPD: its timing and, per period, the representations
// chosen to play.
type manifest struct {
	dynamic   bool
	ast       time.Time     // availabilityStartTime; zero when absent
	mup       time.Duration // minimumUpdatePeriod; 0 when absent
	spd       time.Duration // suggestedPresentationDelay; 0 when absent
	minBuffer time.Duration
	tsbd      time.Duration // timeShiftBufferDepth; 0 when absent
	maxSeg    time.Duration // maxSegmentDuration; 0 when absent
	duration  time.Duration // mediaPresentationDuration; 0 when absent
	location  *url.URL      // the MPD's Location: where to reload it from; nil when absent
	timings   []timing      // UTCTiming elements
	// offset is how far the origin's clock is ahead of this server's (clock.sync): the MPD's
	// times are on the origin's clock.
	offset  time.Duration
	periods []*period
}

// period is one Period and its chosen representations.
type period struct {
	id    string
	index int
	start time.Duration
	end   time.Duration // start of the next period, or the presentation's end; 0 when unknown
	video *rep
	audio *rep
}

// rep is one chosen Representation with its SegmentTemplate resolved.
type rep struct {
	kind      media.Kind
	id        string
	bandwidth uint32
	codecs    string
	base      *url.URL // BaseURL chain resolved against the MPD's URL
	init      string   // initialization template
	media     string   // media template
	timescale uint64
	start     uint64 // startNumber
	end       uint64 // endNumber; 0 when absent
	pto       uint64 // presentationTimeOffset
	duration  uint64 // @duration, for $Number$ addressing without a timeline
	timeline  []seg  // expanded SegmentTimeline
	// hasTimeline tells SegmentTimeline addressing (timeline may be empty) from $Number$
	// addressing by duration.
	hasTimeline bool
}

// seg is one segment of a timeline: its start time and duration in the template's timescale,
// and its number.
type seg struct{ t, d, n uint64 }

// parseManifest reads an MPD fetched from base at now, on the origin's clock.
func parseManifest(b []byte, base *url.URL, now time.Time) (m *manifest, err error) {
	if len(b) > maxMPDBytes {
		return nil, fmt.Errorf("MPD of %d bytes: too large", len(b))
	}
	if !bytes.Contains(b[:min(len(b), 4096)], []byte("MPD")) {
		return nil, fmt.Errorf("not an MPD (it starts with %q)", b[:min(len(b), 16)])
	}
	b, err = normalize(b)
	if err != nil {
		return nil, fmt.Errorf("MPD: %w", err)
	}
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("invalid MPD: %v", r)
		}
	}()
	x, err := mpd.MPDFromBytes(b)
	if err != nil {
		return nil, fmt.Errorf("MPD: %w", err)
	}
	m = &manifest{dynamic: x.GetType() == mpd.DYNAMIC_TYPE,
		mup: dur(x.MinimumUpdatePeriod), spd: dur(x.SuggestedPresentationDelay), minBuffer: dur(x.MinBufferTime),
		tsbd: dur(x.TimeShiftBufferDepth), maxSeg: dur(x.MaxSegmentDuration), duration: dur(x.MediaPresentationDuration)}
	if x.AvailabilityStartTime != "" {
		if m.ast, err = parseDateTime(string(x.AvailabilityStartTime)); err != nil {
			return nil, fmt.Errorf("MPD availabilityStartTime: %w", err)
		}
	}
	if m.dynamic && m.ast.IsZero() {
		return nil, errors.New("dynamic MPD without availabilityStartTime")
	}
	m.timings = timingsOf(x)
	mpdBase := resolve(base, x.BaseURL)
	for _, l := range x.Location {
		if u, err := base.Parse(strings.TrimSpace(string(l))); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
			m.location = u
			break
		}
	}
	left := leftOut{}
	var prev *period
	for i, xp := range x.Periods {
		if xp == nil || i >= maxPeriods {
			break
		}
		p := &period{id: xp.Id, index: i}
		switch {
		case xp.Start != nil:
			p.start = time.Duration(*xp.Start)
		case prev != nil && prev.end > 0:
			p.start = prev.end
		}
		if xp.Duration != nil {
			p.end = p.start + time.Duration(*xp.Duration)
		}
		if prev != nil && (prev.end == 0 || prev.end > p.start) {
			prev.end = p.start
		}
		pBase := resolve(mpdBase, xp.BaseURLs)
		live := m.dynamic && !m.ast.IsZero()
		p.video, p.audio = choose(xp, pBase, periodSpan(m, p, live, now), left)
		m.periods = append(m.periods, p)
		prev = p
	}
	if prev != nil && prev.end == 0 && m.duration > 0 {
		prev.end = m.duration
	}
	for _, p := range m.periods {
		if p.video != nil || p.audio != nil {
			return m, nil
		}
	}
	if len(left) > 0 {
		return nil, fmt.Errorf("%w; left out: %s", errNoRepresentation, left)
	}
	return nil, errNoRepresentation
}

// leftOut counts the representations choose left out, by reason, for the error of an MPD of
// none playable: the operator learns whether it is DRM, the addressing or the codecs.
type leftOut map[string]int

// add counts one representation left out for reason; past 8 reasons, under "other".
func (l leftOut) add(reason string) {
	if _, ok := l[reason]; !ok && len(l) >= 8 {
		reason = "other"
	}
	l[reason]++
}

func (l leftOut) String() string {
	reasons := make([]string, 0, len(l))
	for r, n := range l {
		reasons = append(reasons, fmt.Sprintf("%d %s", n, r))
	}
	slices.Sort(reasons)
	return strings.Join(reasons, ", ")
}

// normalize rewrites an MPD for dash-mpd, whose XML decoder (a modified copy of
// encoding/xml) loops for ever on some documents, found by FuzzManifest: a '>' in character
// data (legal XML, e.g. in a title), a start tag closed by another name, a document without a
// root element. The standard library's strict decoder reads the document (one MPD root
// element, matching tags, no directive such as DOCTYPE, no text outside the root) and it is
// written back with names without namespace prefixes (the MPD schema's elements and the
// attributes read here have none; xmlns declarations and prefixed attributes are dropped),
// text and attribute values escaped, comments and processing instructions left out.
func normalize(b []byte) ([]byte, error) {
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = true
	var out bytes.Buffer
	out.Grow(len(b))
	depth, root := 0, false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			if !root {
				return nil, errors.New("no MPD element")
			}
			return out.Bytes(), nil
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				if root || t.Name.Local != "MPD" {
					return nil, fmt.Errorf("root element %q, want one MPD", t.Name.Local)
				}
				root = true
			}
			depth++
			out.WriteByte('<')
			out.WriteString(t.Name.Local)
			for _, a := range t.Attr {
				if a.Name.Space != "" || a.Name.Local == "xmlns" {
					continue
				}
				out.WriteByte(' ')
				out.WriteString(a.Name.Local)
				out.WriteString(`="`)
				_ = xml.EscapeText(&out, []byte(a.Value))
				out.WriteByte('"')
			}
			out.WriteByte('>')
		case xml.EndElement:
			depth--
			out.WriteString("</")
			out.WriteString(t.Name.Local)
			out.WriteByte('>')
		case xml.CharData:
			if depth == 0 {
				if len(bytes.TrimSpace(t)) > 0 {
					return nil, errors.New("text outside the MPD element")
				}
				continue
			}
			_ = xml.EscapeText(&out, t)
		case xml.Directive:
			return nil, errors.New("directives (DOCTYPE) are not allowed in an MPD")
		}
	}
}

// maxPeriods bounds the periods read from one MPD.
const maxPeriods = 64

// periodSpan returns how far a period's timeline reaches, from its start, for expanding an
// open-ended repeat (r = -1): to the period's end, or to now in a live presentation.
func periodSpan(m *manifest, p *period, live bool, now time.Time) time.Duration {
	switch {
	case p.end > p.start:
		return p.end - p.start
	case live:
		return max(now.Sub(m.ast)-p.start, 0)
	case m.duration > p.start:
		return m.duration - p.start
	}
	return 0
}

// choose picks the period's video representation, the one with the highest bandwidth among
// every video adaptation set, and one audio representation: the highest-bandwidth one of the
// first audio adaptation set with role main (else of the first audio adaptation set).
// Representations under content protection, without SegmentTemplate addressing or of other
// codecs (subtitles among them) are left out, and counted in left.
func choose(xp *mpd.Period, base *url.URL, span time.Duration, left leftOut) (video, audio *rep) {
	type cand struct {
		as *mpd.AdaptationSetType
		r  *rep
	}
	var cands []cand
	var audioSet *mpd.AdaptationSetType
	for _, as := range xp.AdaptationSets {
		if as == nil {
			continue
		}
		asBase := resolve(base, as.BaseURLs)
		for _, xr := range as.Representations {
			if xr == nil {
				continue
			}
			if len(as.ContentProtections) > 0 || len(xr.ContentProtections) > 0 {
				left.add("under content protection (DRM is not supported)")
				continue
			}
			kind := kindOf(as, xr)
			if kind == 0 {
				left.add(fmt.Sprintf("of codecs %.40q", cmp.Or(xr.Codecs, as.Codecs, xr.MimeType, as.MimeType, string(as.ContentType))))
				continue
			}
			r := newRep(kind, xp, as, xr, resolve(asBase, xr.BaseURLs), span)
			if r == nil {
				left.add("without usable SegmentTemplate addressing (SegmentBase and SegmentList are not supported)")
				continue
			}
			cands = append(cands, cand{as, r})
			if kind == media.KindAudio && (audioSet == nil || (isMain(as) && !isMain(audioSet))) {
				audioSet = as
			}
		}
	}
	for _, c := range cands {
		switch {
		case c.r.kind == media.KindVideo && (video == nil || c.r.bandwidth > video.bandwidth):
			video = c.r
		case c.r.kind == media.KindAudio && c.as == audioSet && (audio == nil || c.r.bandwidth > audio.bandwidth):
			audio = c.r
		}
	}
	return video, audio
}

func isMain(as *mpd.AdaptationSetType) bool {
	for _, r := range as.Roles {
		if r != nil && r.Value == "main" {
			return true
		}
	}
	return false
}

// kindOf tells a representation's kind from its codecs (or, without them, its MIME or content
// type); 0 for a codec sluice does not carry.
func kindOf(as *mpd.AdaptationSetType, xr *mpd.RepresentationType) media.Kind {
	codecs := strings.ToLower(xr.Codecs)
	if codecs == "" {
		codecs = strings.ToLower(as.Codecs)
	}
	if codecs == "" {
		mime := xr.MimeType + as.MimeType + string(as.ContentType)
		switch {
		case strings.Contains(mime, "video"):
			return media.KindVideo
		case strings.Contains(mime, "audio"):
			return media.KindAudio
		}
		return 0
	}
	var kind media.Kind
	for _, c := range strings.Split(codecs, ",") {
		c = strings.TrimSpace(c)
		switch {
		case strings.HasPrefix(c, "avc1"), strings.HasPrefix(c, "avc3"), strings.HasPrefix(c, "hvc1"), strings.HasPrefix(c, "hev1"):
			kind = media.KindVideo
		case strings.HasPrefix(c, "mp4a"), c == "opus", c == "mp3":
			if kind == 0 {
				kind = media.KindAudio
			}
		default:
			return 0
		}
	}
	return kind
}

// resolve returns base with the first of urls applied, or base.
func resolve(base *url.URL, urls []*mpd.BaseURLType) *url.URL {
	for _, u := range urls {
		if u == nil || strings.TrimSpace(string(u.Value)) == "" {
			continue
		}
		if r, err := base.Parse(strings.TrimSpace(string(u.Value))); err == nil {
			return r
		}
	}
	return base
}

// dur returns an optional MPD duration; negative ones count as absent.
func dur(d *mpd.Duration) time.Duration {
	if d == nil || *d < 0 {
		return 0
	}
	return time.Duration(*d)
}

// parseDateTime reads an xs:dateTime; without a time zone it is UTC.
func parseDateTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("date %q", s)
}
