package avi

import (
	"errors"
	"fmt"

	"github.com/sluicemedia/sluice/internal/media"
)

// ErrUnsupportedCodec is returned by NewWriter for a track AVI cannot carry here. It wraps
// media.ErrUnsupportedCodec.
var ErrUnsupportedCodec = fmt.Errorf("avi: %w", media.ErrUnsupportedCodec)

// ErrClosed is returned by WriteUnit after Close.
var ErrClosed = errors.New("avi: writer closed")

// ErrTooLarge is returned when a file would need more RIFF segments than its indexes hold.
var ErrTooLarge = errors.New("avi: too many RIFF segments")

// ErrNotAVI is returned by Repair for a file that does not start as an AVI file.
var ErrNotAVI = errors.New("avi: not an AVI file")
