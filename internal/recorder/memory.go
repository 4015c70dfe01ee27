package recorder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/supervisor"
	"github.com/sluicemedia/sluice/packager/record"
)

// keyGate tells whether a unit may start a file or a memory session: with video, only a video
// key frame.
func keyGate(tracks []media.Track, au *media.AccessUnit) bool {
	for _, t := range tracks {
		if t.Codec.IsVideo() {
			return t.ID == au.Track && au.Key
		}
	}
	return true
}

// Memory returns the part that feeds mem from src: each publisher session is a SetTracks, and
// the session's media is kept from its first key frame.
func Memory(src *stream.Stream, mem *record.Memory, log *slog.Logger) supervisor.RunFunc {
	return func(ctx context.Context, rep supervisor.Reporter) error {
		rd, err := src.NewReader("memory recorder")
		if err != nil {
			return err
		}
		defer rd.Close()
		rep.SetState(supervisor.Running)
		started, waitKey := false, true
		var tracks []media.Track
		for {
			au, err := rd.Read(ctx)
			if err != nil {
				return readEnd(ctx, err)
			}
			if !started || au.Discontinuity {
				started, waitKey = true, true
				tracks = src.Tracks()
				if err := mem.SetTracks(tracks); err != nil {
					return fmt.Errorf("memory recording: %w", err)
				}
			}
			if waitKey {
				if !keyGate(tracks, au) {
					continue
				}
				waitKey = false
			}
			if err := mem.Write(au); err != nil {
				log.Debug("memory recording: unit dropped", "error", err)
			}
		}
	}
}

// readEnd turns the error that ended a reader's loop into the part's result.
func readEnd(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("recorder: %w", supervisor.ErrInputGone)
	}
	return err
}
