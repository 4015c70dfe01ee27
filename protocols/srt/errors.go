package srt

import (
	"errors"
	"fmt"

	"github.com/sluicemedia/sluice/internal/stream"
)

// ErrInvalidStreamID is returned by ParseStreamID for a stream id none of the accepted forms
// matches.
var ErrInvalidStreamID = errors.New("invalid stream id")

// ErrInvalidURL is returned by ParseURL for an SRT URL or option it cannot use.
var ErrInvalidURL = errors.New("invalid srt url")

// ErrNoMedia is returned when a connection ended before any media flowed. It wraps
// stream.ErrNoMedia.
var ErrNoMedia = fmt.Errorf("%w received", stream.ErrNoMedia)

// ErrPeerClosed is returned when the peer closed the connection or stopped answering.
var ErrPeerClosed = errors.New("connection closed by peer")
