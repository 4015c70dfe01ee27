package mpegts

import (
	"errors"
	"fmt"

	"github.com/sluicemedia/sluice/internal/media"
)

var (
	// ErrNeedMore is returned by Demuxer.Tracks and Demuxer.Read in push mode (no reader) when
	// the bytes written so far hold nothing more.
	ErrNeedMore = errors.New("mpegts: need more data")

	// ErrNoTracks is returned when the program carries no stream this package supports.
	ErrNoTracks = errors.New("mpegts: no supported track")

	// ErrProgramChanged is returned when the PAT or PMT changes its elementary streams after the
	// tracks were returned; the caller starts a new Demuxer (and marks a discontinuity).
	ErrProgramChanged = errors.New("mpegts: program changed")

	// ErrUnsupportedCodec is returned by the Muxer for a codec MPEG-TS cannot carry here. It
	// wraps media.ErrUnsupportedCodec.
	ErrUnsupportedCodec = fmt.Errorf("mpegts: %w", media.ErrUnsupportedCodec)

	// ErrUnknownTrack is returned by the Muxer for an access unit of a track it was not given.
	// It wraps media.ErrUnknownTrack.
	ErrUnknownTrack = fmt.Errorf("mpegts: %w", media.ErrUnknownTrack)
)
