package bench

import (
	"context"
	"fmt"
	"io"
	"time"
)

// Sent records when a pacer sent each chunk of a clip.
type Sent struct {
	Start   time.Time
	End     time.Time   // when the pacer returned (zero before)
	at      []time.Time // zero for chunks not sent
	clip    *Clip
	started chan struct{} // closed when the pacer starts
}

// Started is closed when the pacer starts sending (its connections are up).
func (s *Sent) Started() <-chan struct{} { return s.started }

// ChunkSent is when chunk i (packets 7i to 7i+6 of the clip) was sent; ok is false when it was
// not. Read it once the pacer returned.
func (s *Sent) ChunkSent(i int) (time.Time, bool) {
	if i < 0 || i >= len(s.at) {
		return time.Time{}, false
	}
	return s.at[i], !s.at[i].IsZero()
}

// FrameDone is when frame i's last packet was sent; ok is false when it was not.
func (s *Sent) FrameDone(i int) (time.Time, bool) {
	if i < 0 || i >= len(s.clip.Frames) {
		return time.Time{}, false
	}
	t := s.at[s.clip.Frames[i].lastChunk]
	return t, !t.IsZero()
}

// FramesSent counts the frames whose last packet was sent.
func (s *Sent) FramesSent() int {
	n := 0
	for i := range s.clip.Frames {
		if _, ok := s.FrameDone(i); ok {
			n++
		}
	}
	return n
}

// newSent prepares the record of one pacing of c.
func newSent(c *Clip) *Sent {
	return &Sent{at: make([]time.Time, len(c.At)), clip: c, started: make(chan struct{})}
}

// Pace writes c to w in 1316-byte chunks at the pace of its PCRs until the clip or ctx ends,
// recording each chunk's send time in s. It returns nil when ctx ended.
func Pace(ctx context.Context, c *Clip, w io.Writer, s *Sent) error {
	s.Start = time.Now()
	defer func() { s.End = time.Now() }()
	close(s.started)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for i, due := range c.At {
		// Sleeping below a millisecond costs more than it gains: such chunks go out at once.
		if d := time.Until(s.Start.Add(due)); d > time.Millisecond {
			timer.Reset(d)
			select {
			case <-ctx.Done():
				return nil
			case <-timer.C:
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		end := min((i+1)*chunkSize, len(c.Data))
		if _, err := w.Write(c.Data[i*chunkSize : end]); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("pace chunk %d of %s: %w", i, c.Path, err)
		}
		s.at[i] = time.Now()
	}
	return nil
}
