package hls

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/bluenviron/gohlslib/v2/pkg/playlist"

	"github.com/sluicemedia/sluice/internal/redact"
	"github.com/sluicemedia/sluice/protocols/internal/httpget"
	"github.com/sluicemedia/sluice/protocols/internal/ingest"
	"github.com/sluicemedia/sluice/protocols/internal/livepull"
)

// errEncrypted is returned for segments under EXT-X-KEY encryption (AES-128, SAMPLE-AES and
// any other METHOD but NONE).
var errEncrypted = errors.New("encrypted HLS (EXT-X-KEY) is not supported")

// rendition follows one media playlist: it starts startDistance segments from the live edge
// (at the first segment of a VOD playlist), downloads each segment in order, reads it into
// units and hands them to the merger, reloading the playlist when it needs the next segment.
// It returns nil after the last segment of an ended playlist (EXT-X-ENDLIST).
type rendition struct {
	name string   // "main" (the variant or the only playlist) or "audio"
	u    *url.URL // the playlist, as asked for: where the last permanent redirect sent it
	base *url.URL // where it came from after redirects: what its URIs resolve against
	ld   *loader
	cfg  config
	log  *slog.Logger
	feed livepull.Feed // to the merger

	pl       *playlist.Media
	maps     []*playlist.MediaMap // EXT-X-MAP in force at each of pl's segments
	restart  bool                 // the media sequence went back: a discontinuity comes next
	next     int64                // media sequence number of the next segment to download; -1 before the start
	target   time.Duration        // EXT-X-TARGETDURATION
	fresh    time.Time            // when the playlist last brought a new segment
	edge     int64                // newest sequence number seen listed
	reader   segmentReader
	initURI  string // EXT-X-MAP the fMP4 reader was made with (URI and byte range)
	rangeURI string // resource of the last byte-range segment, and where its range ended
	rangeEnd uint64
	segments int64
}

func newRendition(name string, u *url.URL, ld *loader, cfg config, log *slog.Logger, out chan<- ingest.Batch) *rendition {
	log = log.With("rendition", name)
	return &rendition{name: name, u: u, base: u, ld: ld, cfg: cfg, log: log, feed: livepull.Feed{Out: out, Log: log, Name: "hls"},
		next: -1, edge: -1, target: 10 * time.Second, fresh: time.Now()}
}

// stallLimit is how long the playlist may bring no new segment.
func (r *rendition) stallLimit() time.Duration { return time.Duration(r.cfg.StallFactor) * r.target }

// run follows the playlist until it ends, fails or ctx ends. first is the body of the
// playlist already downloaded (the primary one) and final the URL it came from, or nil.
func (r *rendition) run(ctx context.Context, first []byte, final *url.URL) error {
	var err error
	if first == nil {
		var f httpget.Fetched
		f, err = r.ld.Get(ctx, r.u, nil, r.ld.MaxPlaylist)
		first, final = f.Body, f.Final
		if err == nil {
			r.u = f.Moved
		}
	}
	pl, maps, err := r.media(first, err)
	if err != nil {
		return err
	}
	r.base = final
	r.take(pl, maps)
	skipped, missing := false, false
	for {
		seg, m, gap, err := r.nextSegment(ctx)
		if err != nil || seg == nil {
			return err
		}
		if seg.Gap { // EXT-X-GAP: nothing to download; the timeline jumps over it
			r.next++
			skipped = true
			continue
		}
		// After a segment the origin does not have, a new TS demuxer (a PES cut by the hole
		// is not joined to the next), but no discontinuity: the timestamps go on the same clock.
		disc := gap || skipped || seg.Discontinuity
		missing, err = r.download(ctx, seg, m, disc, disc || missing)
		if err != nil {
			return err
		}
		skipped = false
	}
}

// take records a loaded playlist and the EXT-X-MAP of each of its segments (nil: the
// playlist's). A playlist that ends before the previous one started means the origin
// restarted its media sequence: playback starts again from the new live edge, after a
// discontinuity, instead of waiting for the old numbers to come back.
func (r *rendition) take(pl *playlist.Media, maps []*playlist.MediaMap) {
	last := int64(pl.MediaSequence) + int64(len(pl.Segments)) - 1
	if r.pl != nil && r.next >= 0 && last < int64(r.pl.MediaSequence) {
		r.log.Warn("hls: the media sequence went back (the origin restarted?); starting again from the live edge",
			"was", r.pl.MediaSequence, "now", pl.MediaSequence)
		r.next, r.edge, r.restart = -1, -1, true
	}
	r.pl, r.maps = pl, maps
	if len(maps) != len(pl.Segments) {
		r.maps = nil
	}
	if pl.TargetDuration > 0 {
		r.target = min(max(time.Duration(pl.TargetDuration)*time.Second, time.Second), 2*time.Minute)
	}
	if last > r.edge {
		r.edge, r.fresh = last, time.Now()
	}
}

// nextSegment returns the segment to download next and its EXT-X-MAP, reloading the playlist
// until it lists it. gap is set when the playlist moved on past segments not downloaded, or
// restarted. It returns a nil segment after the last one of an ended playlist.
func (r *rendition) nextSegment(ctx context.Context) (seg *playlist.MediaSegment, m *playlist.MediaMap, gap bool, err error) {
	for {
		pl := r.pl
		seq, n := int64(pl.MediaSequence), int64(len(pl.Segments))
		if r.next < 0 {
			vod := pl.PlaylistType != nil && *pl.PlaylistType == playlist.MediaPlaylistTypeVOD
			switch {
			case vod || (pl.Endlist && n > 0 && n <= int64(r.cfg.startDistance)):
				r.next = seq
			case n >= int64(r.cfg.startDistance):
				r.next = seq + n - int64(r.cfg.startDistance)
			}
		}
		if r.next >= 0 {
			if r.next < seq {
				r.log.Warn("hls: fell behind the playlist window", "skipped", seq-r.next)
				r.next, gap = seq, true
			}
			if i := r.next - seq; i < n {
				gap, r.restart = gap || r.restart, false
				m = pl.Map
				if r.maps != nil {
					m = r.maps[i]
				}
				return pl.Segments[i], m, gap, nil
			}
			if pl.Endlist {
				return nil, nil, false, nil
			}
		}
		if err := r.reload(ctx); err != nil {
			return nil, nil, false, err
		}
	}
}

// reload waits half a target duration (RFC 8216 6.3.4), then loads the playlist again. It
// fails once no new segment has appeared for the stall limit.
func (r *rendition) reload(ctx context.Context) error {
	deadline := r.fresh.Add(r.stallLimit())
	if !time.Now().Before(deadline) {
		return fmt.Errorf("%s playlist %s: no new segment for %s: %w", r.name, redact.Parsed(r.u), r.stallLimit(), httpget.ErrStalled)
	}
	if err := httpget.Sleep(ctx, min(r.target/2, time.Until(deadline))); err != nil {
		return err
	}
	f, err := r.ld.GetRetry(ctx, r.u, nil, r.ld.MaxPlaylist, deadline, nil)
	m, maps, err := r.media(f.Body, err)
	if errors.Is(err, errEmpty) {
		// An origin (re)starting may list nothing for a while: the stall limit bounds it.
		r.log.Warn("hls: the playlist lists no segment", "playlist", redact.Parsed(r.u))
		return nil
	}
	if err != nil {
		return err
	}
	// A CDN may send each reload elsewhere (a temporary redirect: the next asks r.u again);
	// after a permanent one the next reloads ask where it sent them.
	r.base, r.u = f.Final, f.Moved
	r.take(m, maps)
	return nil
}

// media reads the rendition's media playlist, and the EXT-X-MAP of each segment, from b, the
// body of a download that failed with err (or not).
func (r *rendition) media(b []byte, err error) (*playlist.Media, []*playlist.MediaMap, error) {
	if err != nil {
		return nil, nil, fmt.Errorf("%s playlist %s: %w", r.name, redact.Parsed(r.u), err)
	}
	pl, err := parsePlaylist(b)
	if err != nil {
		return nil, nil, fmt.Errorf("%s playlist %s: %w", r.name, redact.Parsed(r.u), err)
	}
	m, ok := pl.(*playlist.Media)
	if !ok {
		return nil, nil, fmt.Errorf("%s playlist %s: not a media playlist", r.name, redact.Parsed(r.u))
	}
	return m, segmentMaps(b), nil
}

// download fetches one segment (and a new init segment when EXT-X-MAP changed), reads it and
// hands its units to the merger, after a discontinuity when disc; fresh asks for a new MPEG-TS
// demuxer (disc does too). A segment the origin keeps answering 404 or 410 for is skipped
// (livepull.Missing, over its EXTINF duration): missing tells the caller.
func (r *rendition) download(ctx context.Context, seg *playlist.MediaSegment, m *playlist.MediaMap, disc, fresh bool) (missing bool, err error) {
	if seg.Key != nil && seg.Key.Method != playlist.MediaKeyMethodNone {
		return false, fmt.Errorf("%w (METHOD=%s)", errEncrypted, seg.Key.Method)
	}
	deadline := time.Now().Add(r.stallLimit())
	if err := r.prepareReader(ctx, m, deadline, disc, fresh); err != nil {
		return false, err
	}
	su, err := r.base.Parse(seg.URI)
	if err != nil {
		return false, fmt.Errorf("segment %q: %w", redact.URL(seg.URI), redact.Error(err, seg.URI))
	}
	rng := r.segmentRange(su.String(), seg)
	miss := r.feed.Missing(cmp.Or(seg.Duration, r.target), r.stallLimit())
	f, err := r.ld.GetRetry(ctx, su, rng, r.ld.MaxSegment, deadline, miss.Failed)
	if miss.Skip(su, err) {
		r.next++
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("segment %s: %w", redact.Parsed(su), err)
	}
	r.next++
	r.segments++
	tracks, units, err := r.reader.segment(f.Body)
	return false, r.feed.Segment(ctx, su, ingest.Batch{Tracks: tracks, Units: units, Disc: disc}, err)
}

// prepareReader makes the segment reader: MPEG-TS without EXT-X-MAP, fMP4 with one, m (read
// again when the map changes). After a discontinuity a TS stream starts a new Demuxer, whose
// timestamps need not follow the old ones; fresh starts one too (after a missing segment).
func (r *rendition) prepareReader(ctx context.Context, m *playlist.MediaMap, deadline time.Time, disc, fresh bool) error {
	if m == nil || m.URI == "" {
		if r.reader == nil || disc || fresh || r.initURI != "" {
			r.reader, r.initURI = newTSReader(), ""
		}
		return nil
	}
	key := m.URI
	if rng := rangeOf(m.ByteRangeStart, m.ByteRangeLength); rng != nil {
		key = fmt.Sprintf("%s@%d+%d", m.URI, rng.Start, rng.Length)
	}
	if r.reader != nil && r.initURI == key && !disc {
		return nil
	}
	iu, err := r.base.Parse(m.URI)
	if err != nil {
		return fmt.Errorf("init segment %q: %w", redact.URL(m.URI), redact.Error(err, m.URI))
	}
	f, err := r.ld.GetRetry(ctx, iu, rangeOf(m.ByteRangeStart, m.ByteRangeLength), r.ld.MaxSegment, deadline, nil)
	if err != nil {
		return fmt.Errorf("init segment %s: %w", redact.Parsed(iu), err)
	}
	fr, err := newFMP4Reader(f.Body)
	if err != nil {
		return fmt.Errorf("%s: %w", redact.Parsed(iu), err)
	}
	r.reader, r.initURI = fr, key
	return nil
}

// segmentRange returns the byte range of a segment; one without an offset starts where the
// previous range of the same resource ended (RFC 8216 4.3.2.2).
func (r *rendition) segmentRange(u string, seg *playlist.MediaSegment) *httpget.Range {
	if seg.ByteRangeLength == nil {
		r.rangeURI = ""
		return nil
	}
	rng := &httpget.Range{Length: *seg.ByteRangeLength}
	switch {
	case seg.ByteRangeStart != nil:
		rng.Start = *seg.ByteRangeStart
	case r.rangeURI == u:
		rng.Start = r.rangeEnd
	}
	r.rangeURI, r.rangeEnd = u, rng.Start+rng.Length
	return rng
}

func rangeOf(start, length *uint64) *httpget.Range {
	if length == nil {
		return nil
	}
	r := &httpget.Range{Length: *length}
	if start != nil {
		r.Start = *start
	}
	return r
}
