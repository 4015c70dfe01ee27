package srt

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/packager/mpegts"
)

// tsOut muxes a Reader's units into MPEG-TS through an mpegts.Remuxer (timestamps increasing
// across the stream's discontinuities, new tables when the tracks change at one) and writes
// them in payloadSize chunks (7 TS packets, one SRT packet each); the link paces them to the
// connection's maxbw.
type tsOut struct {
	w      io.Writer
	tracks []media.Track // the tracks the output starts with; nil: the stream's
	rmx    *mpegts.Remuxer
	buf    []byte // muxed bytes not yet written: less than one chunk between units
	keyed  bool   // a video key frame was written (or there is no video)
}

// newTSOut returns a writer to w for tracks; with no tracks it takes the stream's tracks at the
// first unit. After a discontinuity it takes the stream's tracks again.
func newTSOut(w io.Writer, tracks []media.Track) *tsOut {
	return &tsOut{w: w, tracks: tracks, buf: make([]byte, 0, 64<<10)}
}

// pump reads r until ctx ends or r fails, writing every unit.
func (o *tsOut) pump(ctx context.Context, r *stream.Reader) error {
	for {
		au, err := r.Read(ctx)
		if err != nil {
			return err
		}
		if err := o.write(ctx, au, r.Stream()); err != nil {
			return err
		}
	}
}

// write muxes one unit and writes the whole chunks it completes. src gives the stream's
// tracks at the start and after a discontinuity; nil keeps the tracks given to newTSOut.
func (o *tsOut) write(ctx context.Context, au *media.AccessUnit, src mpegts.TrackSource) error {
	if !o.keyed {
		// Nothing went out yet: start over with the stream's tracks at a discontinuity, and
		// start at a video key frame (a Reader does already; a drained one may not).
		if err := o.start(au, src); err != nil {
			return err
		}
		if au.Track < 0 || au.Track >= len(o.tracks) {
			return nil
		}
		video := slices.ContainsFunc(o.tracks, func(t media.Track) bool { return t.Codec.IsVideo() })
		if video && !(au.Key && o.tracks[au.Track].Codec.IsVideo()) {
			return nil
		}
		o.keyed = true
	}
	buf, _, ok, err := o.rmx.AppendAccessUnit(o.buf, au)
	if err != nil {
		return fmt.Errorf("mux track %d: %w", au.Track, err)
	}
	if !ok {
		return nil
	}
	o.buf = buf
	n := len(o.buf) / payloadSize * payloadSize
	for off := 0; off < n; off += payloadSize {
		if _, err := o.w.Write(o.buf[off : off+payloadSize]); err != nil {
			if peerEnded(err) {
				return ErrPeerClosed
			}
			return fmt.Errorf("write: %w", err)
		}
	}
	o.buf = o.buf[:copy(o.buf, o.buf[n:])]
	return nil
}

// start creates the remuxer before the first unit goes out: for the tracks given to newTSOut,
// else, and after a discontinuity, for the stream's.
func (o *tsOut) start(au *media.AccessUnit, src mpegts.TrackSource) error {
	if o.rmx != nil && !(au.Discontinuity && src != nil) {
		return nil
	}
	tracks := o.tracks
	if (o.rmx != nil || len(tracks) == 0) && src != nil {
		tracks = src.Tracks()
	}
	if len(tracks) == 0 {
		return fmt.Errorf("mux: the stream has no tracks")
	}
	if src == nil {
		src = fixedTracks(tracks)
	}
	rmx, err := mpegts.NewRemuxer(tracks, src)
	if err != nil {
		return fmt.Errorf("mux: %w", err)
	}
	o.rmx, o.tracks = rmx, tracks
	return nil
}

// fixedTracks is a TrackSource whose tracks never change.
type fixedTracks []media.Track

// Tracks returns the tracks.
func (f fixedTracks) Tracks() []media.Track { return f }
