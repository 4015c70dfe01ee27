package rtsp

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/pion/rtp"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
)

// Probe limits: the tracks are announced once every track's parameters are known, or once one
// track's are and the probe has run this long or queued this much; until then units wait.
const (
	probeDuration = 3 * time.Second
	probeUnits    = 1024
	probeBytes    = 16 << 20
)

// ingest turns the RTP packets of one RTSP session into the units of one publisher session.
// Its methods are safe for concurrent use: a client reading over UDP gets each media's packets
// on its own goroutine.
type ingest struct {
	log *slog.Logger
	now func() time.Time

	mu        sync.Mutex
	pub       *stream.Publisher
	tracks    []*inTrack
	clock     sessionClock
	announced bool
	closed    bool
	pending   []*media.AccessUnit // units waiting for the tracks; Track is the index in tracks
	pendBytes int
	pendSince time.Time
	scratch   []*media.AccessUnit
	written   int64
	bytes     int64
	errLog    limiter
}

// newIngest returns the ingest of tracks into pub. Tracks left out of the stream may be nil.
func newIngest(pub *stream.Publisher, tracks []*inTrack, log *slog.Logger) *ingest {
	return &ingest{log: log, now: time.Now, pub: pub, tracks: tracks}
}

// onPacket takes one RTP packet of tracks[i].
func (in *ingest) onPacket(i int, pkt *rtp.Packet) {
	in.mu.Lock()
	defer in.mu.Unlock()
	t := in.tracks[i]
	if in.closed || t == nil || t.off {
		return
	}
	now := in.now()
	pts := in.clock.decode(&t.clk, t.rtpRate, pkt.Timestamp, now)
	var err error
	in.scratch, err = t.units(pkt, pts, in.scratch[:0])
	if err != nil && !errors.Is(err, errMore) && !errors.Is(err, errEmptyUnit) {
		t.errs++
		if in.errLog.allow(now) {
			in.log.Warn("rtsp: dropped RTP data", "codec", t.name, "error", err, "errors", t.errs)
		}
	}
	for j, au := range in.scratch {
		au.Arrival = now
		au.Track = i
		in.emit(t, au, now)
		in.scratch[j] = nil
	}
}

// emit writes a unit, or queues it until the tracks are announced. in.mu held.
func (in *ingest) emit(t *inTrack, au *media.AccessUnit, now time.Time) {
	if in.announced {
		in.write(t, au)
		return
	}
	if len(in.pending) == 0 {
		in.pendSince = now
	}
	in.pending = append(in.pending, au)
	in.pendBytes += au.Size()
	in.checkReady(now)
}

// checkReady announces the tracks when every one is ready, or when the probe ran out and one
// is; when the probe ran out with none ready, what waited is dropped. in.mu held.
func (in *ingest) checkReady(now time.Time) {
	all, any := true, false
	for _, t := range in.tracks {
		switch {
		case t == nil || t.off:
		case t.ready:
			any = true
		default:
			all = false
		}
	}
	spent := len(in.pending) >= probeUnits || in.pendBytes >= probeBytes || now.Sub(in.pendSince) >= probeDuration
	switch {
	case any && (all || spent):
		in.announce()
	case spent:
		in.log.Warn("rtsp: no track ready after the probe; dropping what waited", "units", len(in.pending))
		clear(in.pending)
		in.pending, in.pendBytes = in.pending[:0], 0
	}
}

// announce sets the stream's tracks, the ready ones in SDP order, and writes what waited.
// in.mu held.
func (in *ingest) announce() {
	var tracks []media.Track
	for _, t := range in.tracks {
		if t == nil || !t.ready || t.off {
			continue
		}
		t.id = len(tracks)
		t.track.ID = t.id
		if t.video != nil {
			t.track.Params = t.video.params()
		}
		tracks = append(tracks, t.track)
	}
	in.announced = true
	if err := in.pub.SetTracks(tracks); err != nil {
		in.log.Warn("rtsp: set tracks", "error", err)
	}
	attrs := make([]any, 0, len(tracks))
	for _, t := range tracks {
		desc := fmt.Sprintf("%s %dx%d", t.Codec, t.Params.Width, t.Params.Height)
		if !t.Codec.IsVideo() {
			desc = fmt.Sprintf("%s %d Hz %d ch", t.Codec, t.Params.SampleRate, t.Params.Channels)
		}
		attrs = append(attrs, fmt.Sprintf("track%d", t.ID), desc)
	}
	in.log.Info("rtsp: tracks", attrs...)
	for i, au := range in.pending {
		in.write(in.tracks[au.Track], au)
		in.pending[i] = nil
	}
	in.pending, in.pendBytes = nil, 0
}

// write hands a unit of t to the publisher. in.mu held.
func (in *ingest) write(t *inTrack, au *media.AccessUnit) {
	if t.id < 0 {
		return
	}
	au.Track = t.id
	if err := in.pub.Write(au); err != nil {
		if in.errLog.allow(au.Arrival) {
			in.log.Warn("rtsp: write", "error", err)
		}
		return
	}
	in.written++
	in.bytes += int64(au.Size())
}

// units returns how many units reached the stream.
func (in *ingest) units() int64 {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.written
}

// close detaches the publisher; later packets are ignored. Idempotent.
func (in *ingest) close() {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return
	}
	in.closed = true
	in.pending = nil
	repairs := in.pub.Repairs()
	in.pub.Close()
	var dtsErrs, errs int64
	for _, t := range in.tracks {
		if t == nil {
			continue
		}
		if t.video != nil {
			dtsErrs += t.video.dtsErrs
		}
		errs += t.errs
	}
	in.log.Info("rtsp: publisher session ended", "units", in.written, "bytes", in.bytes,
		"timestamp_repairs", repairs, "dts_errors", dtsErrs, "rtp_errors", errs)
}

// limiter allows one event a second.
type limiter struct{ last time.Time }

// allow tells whether an event at now may be logged.
func (l *limiter) allow(now time.Time) bool {
	if now.Sub(l.last) < time.Second {
		return false
	}
	l.last = now
	return true
}
