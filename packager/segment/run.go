package segment

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
)

// Run feeds the units of r to each segmenter until ctx ends (it returns nil then) or r fails.
// It sets the tracks from r's Stream at the first unit and at every discontinuity. At the end
// of the stream (io.EOF) it ends the open segments and returns nil. Write errors are logged
// at most once a second; the caller owns r.
func Run(ctx context.Context, r *stream.Reader, log *slog.Logger, sgs ...*Segmenter) error {
	if log == nil {
		log = slog.Default()
	}
	strm := r.Stream()
	first := true
	var loggedAt time.Time
	for {
		au, err := r.Read(ctx)
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return nil
			case errors.Is(err, io.EOF):
				for _, sg := range sgs {
					if err := sg.Flush(); err != nil {
						log.Warn("segment: last segment", "error", err)
					}
				}
				return nil
			}
			return err
		}
		if first || au.Discontinuity {
			first = false
			tracks := strm.Tracks()
			for _, sg := range sgs {
				if err := sg.SetTracks(tracks); err != nil {
					log.Warn("segment: tracks cannot be packaged", "error", err)
				}
			}
		}
		for _, sg := range sgs {
			err := sg.WriteUnit(au)
			if err == nil || errors.Is(err, ErrNoTracks) {
				continue // SetTracks said why
			}
			if now := time.Now(); now.Sub(loggedAt) >= time.Second {
				log.Warn("segment: write", "error", err)
				loggedAt = now
			}
		}
	}
}
