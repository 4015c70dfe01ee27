package hls

import (
	"fmt"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/protocols/internal/httpget"
)

// ErrNoMedia is wrapped by the error of a pull whose playlist ended before any media reached
// the stream. It wraps stream.ErrNoMedia.
var ErrNoMedia = fmt.Errorf("%w: the playlist ended first", stream.ErrNoMedia)

// config holds the tunables of a pull: those both pulls share (httpget.Config) and HLS's own.
// Tests shrink them.
type config struct {
	httpget.Config
	// startDistance is how many segments from the live edge playback starts; a playlist
	// with fewer is reloaded until it has them. 3, as gohlslib and most players.
	startDistance int
}

var defaultConfig = config{Config: httpget.DefaultConfig, startDistance: 3}

// loader downloads playlists and segments (httpget) with the pull's tunables at hand; the pull
// skeleton (livepull) makes it.
type loader = httpget.PullLoader
