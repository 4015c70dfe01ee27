package segment

import (
	"time"

	"github.com/sluicemedia/sluice/internal/opt"
)

// Live is what a player's HLS and DASH handlers share of its settings (spec 2.1): which
// player they serve, when their list starts to answer, how far behind the live edge players
// start, and the format's fragment size and window (which the API sets per format).
type Live struct {
	// ID is the player's ID, quoted in the warm-up answer.
	ID string
	// InitialSegments is initial_live_manifest_size: the playlist or manifest answers 404
	// until this many segments were made. Default 3.
	InitialSegments int
	// LiveSyncCount is live_sync_duration_count: players start this many fragments behind
	// the live edge (HLS: EXT-X-START; DASH: suggestedPresentationDelay). Default 4.
	LiveSyncCount int
	// FragmentSize is hls_fragment_size or dash_fragment_size. Default 3 s.
	FragmentSize time.Duration
	// Window is hls_fragment_length or dash_fragment_length: the media the playlist or
	// manifest lists (DASH: its timeShiftBufferDepth). Default 60 s.
	Window time.Duration
	// PartTarget, when set, makes the handler low-latency (part_duration_ms): the HLS
	// playlist lists the partial segments the store's segmenter cuts to this target
	// (LL-HLS), the DASH manifest carries the low-latency marks (LL-DASH). Default 0: the
	// classic playlist or manifest.
	PartTarget time.Duration
	// WaitTimeout bounds a low-latency request that waits for media not made yet: an HLS
	// playlist request with _HLS_msn or a partial segment not ready, a DASH segment streamed
	// as it is made. It is then answered 503. Default three fragment sizes.
	WaitTimeout time.Duration
	// MaxWaiting caps the requests waiting (DASH: or streaming) at once on one handler; one
	// more is answered 503 at once, so that clients cannot pile up waiting goroutines.
	// Default 256.
	MaxWaiting int
}

// WithDefaults returns l with the defaults in place of zero or negative values.
func (l Live) WithDefaults() Live {
	opt.Positive(&l.InitialSegments, 3)
	opt.Positive(&l.LiveSyncCount, 4)
	opt.Positive(&l.FragmentSize, 3*time.Second)
	opt.Positive(&l.Window, 60*time.Second)
	opt.Positive(&l.WaitTimeout, 3*l.FragmentSize)
	opt.Positive(&l.MaxWaiting, 256)
	return l
}
