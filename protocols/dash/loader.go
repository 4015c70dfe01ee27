package dash

import (
	"fmt"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/protocols/internal/httpget"
)

// ErrNoMedia is wrapped by the error of a pull whose presentation ended before any media reached
// the stream. It wraps stream.ErrNoMedia.
var ErrNoMedia = fmt.Errorf("%w: the presentation ended first", stream.ErrNoMedia)

// config holds the tunables of a pull: those both pulls share (httpget.Config, where
// MaxPlaylist caps one MPD) and DASH's own. Tests shrink them.
type config struct {
	httpget.Config
	// minStall is the least stall limit, for very short segments. 3 s.
	minStall time.Duration
	// minRefresh is the least time between two loads of the MPD. 500 ms.
	minRefresh time.Duration
}

var defaultConfig = config{Config: httpget.DefaultConfig, minStall: 3 * time.Second, minRefresh: 500 * time.Millisecond}

// loader downloads MPDs and segments (httpget) with the pull's tunables at hand; the pull
// skeleton (livepull) makes it.
type loader = httpget.PullLoader
