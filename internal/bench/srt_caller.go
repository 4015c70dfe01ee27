package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/sluicemedia/sluice/protocols/srt/link"
)

// srtCaller is a receiver that calls an SRT listener (the server module with a receiver stream
// id, or a relay's output), retrying until it is let in, and counts what it reads. With
// stamping on, it also places every packet in the clip and notes when each payload arrived.
type srtCaller struct {
	addr     string
	streamID string
	clip     *Clip
	cancel   context.CancelFunc
	up       chan struct{} // closed once connected
	done     chan struct{} // closed when the goroutine returned

	mu        sync.Mutex
	cnt       TSCount
	stamping  bool
	match     clipMatcher
	stamps    []stamp
	connected time.Time
	err       error // the dial's failure, when it never connected
	lastFrame int   // index in the clip of the last frame read, -1 before one
	foreign   bool  // a frame's PTS is not the clip's: the frames cannot be placed
}

// callSRT starts a receiver that dials addr with streamID until it connects or Close; with
// stamp, it places what it reads in clip.
func callSRT(addr, streamID string, clip *Clip, stamp bool) *srtCaller {
	ctx, cancel := context.WithCancel(context.Background())
	k := &srtCaller{addr: addr, streamID: streamID, clip: clip, cancel: cancel, stamping: stamp,
		up: make(chan struct{}), done: make(chan struct{}), lastFrame: -1}
	k.cnt.onFrame = k.frame
	if stamp {
		k.match = newClipMatcher(clip.Packets())
	}
	go k.run(ctx)
	return k
}

// run dials, then reads until the connection ends or Close.
func (k *srtCaller) run(ctx context.Context) {
	defer close(k.done)
	conn, err := dialSRT(ctx, k.addr, k.streamID)
	if err != nil {
		k.mu.Lock()
		k.err = err
		k.mu.Unlock()
		return
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	defer conn.Close()
	k.mu.Lock()
	k.connected = time.Now()
	k.mu.Unlock()
	close(k.up)
	buf := make([]byte, link.MaxPayloadSize)
	for {
		n, err := conn.Read(buf)
		if err != nil {
			return
		}
		at := time.Now()
		k.mu.Lock()
		k.cnt.Feed(buf[:n])
		if k.stamping {
			k.stampPayload(buf[:n], at)
		}
		k.mu.Unlock()
	}
}

// stampPayload places the packets of payload p in the clip and notes when it came, under the
// clip index of its last placed packet; k.mu is held.
func (k *srtCaller) stampPayload(p []byte, at time.Time) {
	last := -1
	for len(p) >= tsSize {
		if i := k.match.place(p[:tsSize]); i >= 0 {
			last = i
		}
		p = p[tsSize:]
	}
	if last >= 0 {
		k.stamps = append(k.stamps, stamp{at: at, packet: last})
	}
}

// frame places a video frame the receiver read in the clip; k.mu is held.
func (k *srtCaller) frame(pts int64) {
	i, ok := k.clip.FrameIndex(pts)
	if !ok {
		k.foreign = true
		return
	}
	k.lastFrame = max(k.lastFrame, i)
}

// waitUp waits until the receiver is connected, or ctx ends.
func (k *srtCaller) waitUp(ctx context.Context) error {
	select {
	case <-k.up:
		return nil
	case <-k.done:
		k.mu.Lock()
		defer k.mu.Unlock()
		return fmt.Errorf("srt receiver of %s at %s: %w", k.streamID, k.addr, k.err)
	case <-ctx.Done():
		return fmt.Errorf("srt receiver of %s at %s: not connected: %w", k.streamID, k.addr, ctx.Err())
	}
}

// Received is what the receiver got so far; its frames are placed in the clip by their PTS
// (unless one is not the clip's).
func (k *srtCaller) Received() Received {
	k.mu.Lock()
	c, last, foreign := k.cnt, k.lastFrame, k.foreign
	k.mu.Unlock()
	r := Received{Frames: c.Frames, CCErrors: c.CCErrors, FirstPTS: c.FirstPTS, LastPTS: c.LastPTS, FirstErr: c.FirstErr}
	if c.Packets == 0 {
		r.FirstPTS = -1
	}
	if r.FirstPTS >= 0 && !foreign {
		if i, ok := k.clip.FrameIndex(r.FirstPTS); ok {
			r.Joined, r.LastFrame, r.Placed = i, last, true
		}
	}
	return r
}

// Stamped is what the stamping measured: the payloads' delays past minus (milliseconds, see
// latencies), the clip's packets lost between the first and last read, and the packets that
// could not be placed in the clip.
func (k *srtCaller) Stamped(s *Sent, minus time.Duration) (delays []float64, lost, unplaced int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return latencies(k.stamps, s, k.connected, minus), k.match.lost(), k.match.unplaced
}

// Kind is the receiver's protocol.
func (k *srtCaller) Kind() string { return recvSRT }

// Label names the receiver in logs.
func (k *srtCaller) Label() string { return fmt.Sprintf("srt caller %s %s", k.addr, k.streamID) }

// Close stops the receiver and waits for its goroutine.
func (k *srtCaller) Close() {
	k.cancel()
	<-k.done
}
