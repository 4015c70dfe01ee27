package rtmp

import (
	"errors"
	"fmt"

	"github.com/sluicemedia/sluice/internal/stream"
)

var (
	// ErrMalformed is returned for bytes that do not follow RTMP or AMF0.
	ErrMalformed = errors.New("rtmp: malformed")

	// ErrRefused is returned by Pull and Push when the remote server refuses the connection,
	// the play or the publish; the error text quotes its status code.
	ErrRefused = errors.New("rtmp: refused by the server")

	// ErrNoMedia is returned by Pull when the remote ended the stream before any media came.
	// It wraps stream.ErrNoMedia.
	ErrNoMedia = fmt.Errorf("rtmp: %w: the stream ended first", stream.ErrNoMedia)

	// ErrSetupTimeout ends a server connection that neither published nor played within the
	// server's SetupTimeout.
	ErrSetupTimeout = errors.New("rtmp: no publish or play in time")

	// ErrUnsupportedURL is returned for a URL that is not rtmp://host[:port]/app/key.
	ErrUnsupportedURL = errors.New("rtmp: unsupported URL")
)
