package srt

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/packager/mpegts"
)

// tsOut muxes a Reader's units into MPEG-TS and writes them in payloadSize chunks (7 TS
// packets, one SRT packet each). The units stay shared: only their timestamps are rewritten,
// in a header copy, so that they keep increasing across the stream's discontinuities.
type tsOut struct {
	w      io.Writer
	tracks []media.Track
	mux    *mpegts.Muxer
	tl     timeline
	au     media.AccessUnit // the current unit's header with output timestamps
	buf    []byte           // muxed bytes not yet written: less than one chunk between units
	keyed  bool             // a video key frame was written (or there is no video)
	pace   *pacer           // nil when the rate is not capped
}

// newTSOut returns a writer to w for tracks; with no tracks it takes the stream's tracks at the
// first unit. After a discontinuity it takes the stream's tracks again. maxBW caps the output
// in bytes per second (≤ 0: no cap).
func newTSOut(w io.Writer, tracks []media.Track, maxBW int64) *tsOut {
	return &tsOut{w: w, tracks: tracks, buf: make([]byte, 0, 64<<10), pace: newPacer(maxBW)}
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

// write muxes one unit and writes the whole chunks it completes.
func (o *tsOut) write(ctx context.Context, au *media.AccessUnit, s *stream.Stream) error {
	switch {
	case o.mux == nil && len(o.tracks) > 0:
		if err := o.setup(o.tracks); err != nil {
			return err
		}
	case o.mux == nil || au.Discontinuity:
		if err := o.setup(s.Tracks()); err != nil {
			return err
		}
	}
	if au.Track < 0 || au.Track >= len(o.tracks) {
		return nil
	}
	if !o.keyed {
		// Start at a video key frame (a Reader does already; a drained one may not).
		video := slices.ContainsFunc(o.tracks, func(t media.Track) bool { return t.Codec.IsVideo() })
		if video && !(au.Key && o.tracks[au.Track].Codec.IsVideo()) {
			return nil
		}
		o.keyed = true
	}
	o.au = *au
	o.au.PTS, o.au.DTS = o.tl.shift(au, o.tracks[au.Track].ClockRate)
	var err error
	o.buf, err = o.mux.AppendAccessUnit(o.buf, &o.au)
	o.au.Payload = nil
	if err != nil {
		return fmt.Errorf("mux track %d: %w", au.Track, err)
	}
	n := len(o.buf) / payloadSize * payloadSize
	if err := o.pace.wait(ctx, n); err != nil {
		return err
	}
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

// setup (re)creates the muxer when the tracks changed in a way MPEG-TS carries in its tables
// or headers: codecs, clock rates, audio configuration. A new parameter set alone needs no new
// muxer: it travels in-band on key frames.
func (o *tsOut) setup(tracks []media.Track) error {
	if o.mux != nil && sameTS(o.tracks, tracks) {
		return nil
	}
	if len(tracks) == 0 {
		return fmt.Errorf("mux: the stream has no tracks")
	}
	m, err := mpegts.NewMuxer(o.w, tracks)
	if err != nil {
		return fmt.Errorf("mux: %w", err)
	}
	o.mux, o.tracks = m, tracks
	return nil
}

// sameTS tells whether a and b mux to the same PMT and audio headers.
func sameTS(a, b []media.Track) bool {
	return slices.EqualFunc(a, b, func(x, y media.Track) bool {
		return x.Codec == y.Codec && x.ClockRate == y.ClockRate &&
			x.Params.SampleRate == y.Params.SampleRate && x.Params.Channels == y.Params.Channels &&
			bytes.Equal(x.Params.AudioConfig, y.Params.AudioConfig)
	})
}

// timeline keeps output timestamps increasing across discontinuities: after one, the stream's
// new clock is shifted to continue 40 ms after the latest unit sent, on every track alike.
type timeline struct {
	started bool
	off90k  int64
	last90k int64
}

// shift returns au's PTS and DTS on the output timeline.
func (t *timeline) shift(au *media.AccessUnit, rate int) (pts, dts int64) {
	d90k := media.Rescale(au.DTS, rate, 90000)
	if au.Discontinuity && t.started {
		t.off90k = t.last90k + rebaseGap90k - d90k
	}
	off := media.Rescale(t.off90k, 90000, rate)
	if out := d90k + t.off90k; !t.started || out > t.last90k {
		t.last90k = out
	}
	t.started = true
	return au.PTS + off, au.DTS + off
}
