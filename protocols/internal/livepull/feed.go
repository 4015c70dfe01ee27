package livepull

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"

	"github.com/sluicemedia/sluice/protocols/internal/ingest"
)

// MaxBroken is how many unreadable segments in a row end a pull.
const MaxBroken = 3

// Feed hands the units of one source's segments (an HLS rendition, a DASH representation
// kind) to the merger, and counts the unreadable segments in a row.
type Feed struct {
	// Out is the source's channel to the merger.
	Out chan<- ingest.Batch
	// Log gets the "segment skipped" warnings; Name ("hls", "dash") prefixes them.
	Log  *slog.Logger
	Name string

	broken int // unreadable segments in a row
}

// Segment is told what reading the segment at u gave: b, or err when it could not be read.
// An unreadable segment is skipped with a warning (the next key frame recovers) unless it is
// the MaxBroken-th in a row: then the error, naming u. A batch with no unit, no new tracks and
// no discontinuity is not sent (the merger would do nothing with it). Segment returns ctx's
// error when ctx ends before the merger takes the batch.
func (f *Feed) Segment(ctx context.Context, u *url.URL, b ingest.Batch, err error) error {
	if err != nil {
		if f.broken++; f.broken >= MaxBroken {
			return fmt.Errorf("segment %s (%d unreadable in a row): %w", u.Redacted(), f.broken, err)
		}
		f.Log.Warn(f.Name+": segment skipped", "url", u.Redacted(), "error", err)
		return nil
	}
	f.broken = 0
	if b.Tracks == nil && len(b.Units) == 0 && !b.Disc {
		return nil
	}
	select {
	case f.Out <- b:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
