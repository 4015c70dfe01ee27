// Package tsmux reads a stream.Reader's units and muxes them into MPEG-TS for the outputs that
// send TS as it comes (protocols/httpts, protocols/udp): through an mpegts.Remuxer, whose
// timestamps keep increasing across the stream's discontinuities and which starts new tables
// when the tracks change at one (logged).
package tsmux

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/packager/mpegts"
	"github.com/sluicemedia/sluice/protocols/internal/ingest"
)

// Muxer muxes the units of one Reader.
type Muxer struct {
	r   *stream.Reader
	rmx *mpegts.Remuxer
}

// New returns the muxer of r's units for tracks, the stream's tracks when r was opened; the
// tracks it changes to at a discontinuity are logged to log.
func New(r *stream.Reader, tracks []media.Track, log *slog.Logger) (*Muxer, error) {
	rmx, err := mpegts.NewRemuxer(tracks, r.Stream())
	if err != nil {
		return nil, err
	}
	rmx.OnTracks = func(changed []media.Track) { log.Info("tracks changed", "tracks", ingest.Describe(changed)) }
	return &Muxer{r: r, rmx: rmx}, nil
}

// Run reads units until ctx ends or the stream closes (nil), or reading, muxing or fn fails
// (the error). The TS bytes of each unit are appended to buf, and every unit that made some is
// handed to fn with buf, its DTS on the 90 kHz TS clock; fn returns the buffer the next unit's
// bytes are appended to (buf[:0] when it sent them all).
func (m *Muxer) Run(ctx context.Context, buf []byte, fn func(buf []byte, dts90 int64, au *media.AccessUnit) ([]byte, error)) error {
	for {
		au, err := m.r.Read(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		b, dts90, ok, err := m.rmx.AppendAccessUnit(buf, au)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if buf, err = fn(b, dts90, au); err != nil {
			return err
		}
	}
}
