package flv

import (
	"errors"
	"fmt"

	"github.com/sluicemedia/sluice/internal/media"
)

var (
	// ErrUnsupportedCodec is returned for a codec this package does not carry (AV1, VP9,
	// Speex...); the error text names it. It wraps media.ErrUnsupportedCodec.
	ErrUnsupportedCodec = fmt.Errorf("flv: %w", media.ErrUnsupportedCodec)

	// ErrMalformed is returned for a tag or file whose bytes do not follow the format.
	ErrMalformed = errors.New("flv: malformed")

	// ErrTooLarge is returned for a tag that declares more bytes than the reader's cap.
	ErrTooLarge = errors.New("flv: tag too large")

	// ErrCodecChanged is returned by the Depacketizer when a track's codec changes after the
	// tracks were announced; the caller starts over.
	ErrCodecChanged = errors.New("flv: codec changed")

	// ErrUnknownTrack is returned for an access unit of a track the writer was not given. It
	// wraps media.ErrUnknownTrack.
	ErrUnknownTrack = fmt.Errorf("flv: %w", media.ErrUnknownTrack)
)
