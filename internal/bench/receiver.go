package bench

import "fmt"

// Received is what one receiver of a fan-out got so far.
type Received struct {
	Frames    int    // video frames
	Joined    int    // frames of the clip before the first one the receiver could get (it joined late)
	Placed    bool   // the receiver found its frames in the clip: Joined and LastFrame hold
	LastFrame int    // index in the clip of the last frame received, when Placed
	CCErrors  int    // MPEG-TS continuity errors; RTMP runs over TCP and has none to count
	Dropped   int64  // units the bench's own RTMP reader dropped (never expected: it only counts)
	FirstPTS  int64  // 90 kHz PTS of the first video frame, -1 before one
	LastPTS   int64  // 90 kHz PTS of the last video frame
	FirstErr  string // the first continuity error: where and what, empty when none
}

// receiver is a sink of a fan-out in the bench process: it takes one restream and counts it.
type receiver interface {
	Received() Received
	Label() string // protocol and address, for logs
	Kind() string  // recvSRT or recvRTMP
	Close()
}

// Protocols of the fan-out receivers.
const (
	recvSRT  = "srt"
	recvRTMP = "rtmp"
)

// receiverKind is the protocol of the i-th of a fan-out's receivers: SRT and RTMP alternate, so
// that any even count is half of each.
func receiverKind(i int) string {
	if i%2 == 0 {
		return recvSRT
	}
	return recvRTMP
}

// rtmpKey is the stream key of the i-th receiver.
func rtmpKey(i int) string { return fmt.Sprintf("fan-%d", i) }
