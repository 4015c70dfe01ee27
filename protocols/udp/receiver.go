package udp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/protocols/internal/ingest"
)

// maxDatagram is the largest UDP payload.
const maxDatagram = 64 << 10

// garbageLogPeriod is the least time between two logs of datagrams that are not MPEG-TS.
const garbageLogPeriod = 10 * time.Second

// receiver runs publisher sessions from the datagrams of one socket.
type receiver struct {
	conn *net.UDPConn
	s    *stream.Stream
	log  *slog.Logger
	idle time.Duration
	// quiet, when set, ends run after that long without a valid datagram (Pull's timeout).
	quiet time.Duration

	feed     *ingest.TSFeed // nil between sessions
	last     time.Time
	flowed   bool // some session published units
	garbage  int64
	loggedAt time.Time
}

// past is a deadline that has passed: it wakes a blocked read.
var past = time.Unix(1, 0)

// run reads datagrams until ctx ends (nil), the quiet timeout passes (nil after media, else an
// error), the stream closes or the socket fails.
func (r *receiver) run(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { _ = r.conn.SetReadDeadline(past) })
	defer stop()
	defer r.endSession()
	buf := make([]byte, maxDatagram)
	start := time.Now()
	r.setDeadline(start)
	for {
		if ctx.Err() != nil {
			return nil
		}
		n, err := r.conn.Read(buf)
		now := time.Now()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				return fmt.Errorf("udp read %s: %w", r.conn.LocalAddr(), err)
			}
			if done, err := r.onTimeout(now, start); done {
				return err
			}
			continue
		}
		p := tsPayload(buf[:n])
		if p == nil {
			r.onGarbage(now)
			continue
		}
		r.last = now
		if r.feed == nil {
			r.log.Debug("session start", "bytes", n)
			r.feed = ingest.NewTSFeed(ingest.NewPublisher(r.s, r.log))
			r.setDeadline(now)
		}
		if r.feed.Err() != nil {
			continue // the session was refused: wait for it to go quiet
		}
		if _, err := r.feed.Write(p); err != nil {
			if errors.Is(err, stream.ErrClosed) {
				return fmt.Errorf("udp %s: %w", r.conn.LocalAddr(), err)
			}
			r.log.Warn("session refused; ignoring it until it goes quiet", "error", err)
		}
	}
}

// onTimeout handles a read deadline: the session ends when it has been idle long enough, and
// run ends when the quiet timeout passed. done tells run to return err.
func (r *receiver) onTimeout(now, start time.Time) (done bool, err error) {
	if r.feed != nil && now.Sub(r.last) >= r.idle {
		r.endSession()
	}
	if r.quiet > 0 {
		since := start
		if !r.last.IsZero() {
			since = r.last
		}
		if now.Sub(since) >= r.quiet {
			if r.flowed {
				return true, nil
			}
			return true, fmt.Errorf("udp %s: no MPEG-TS for %s", r.conn.LocalAddr(), r.quiet)
		}
	}
	r.setDeadline(now)
	return false, nil
}

// setDeadline arms the read deadline for the next idle or quiet check; a read that returns
// early just arms it again. Deadlines move only on timeouts and session starts, not per read.
func (r *receiver) setDeadline(now time.Time) {
	var at time.Time
	base := r.last
	if base.IsZero() {
		base = now
	}
	if r.feed != nil {
		at = base.Add(r.idle)
	}
	if r.quiet > 0 {
		if q := base.Add(r.quiet); at.IsZero() || q.Before(at) {
			at = q
		}
	}
	if !at.IsZero() && !at.After(now) {
		at = now.Add(10 * time.Millisecond)
	}
	_ = r.conn.SetReadDeadline(at)
}

func (r *receiver) endSession() {
	if r.feed == nil {
		return
	}
	r.feed.Finish()
	if r.feed.Units() > 0 {
		r.flowed = true
	}
	r.log.Debug("session end", "idle", r.idle)
	r.feed = nil
}

// onGarbage counts a datagram that is not MPEG-TS, logging at most every garbageLogPeriod.
func (r *receiver) onGarbage(now time.Time) {
	r.garbage++
	if now.Sub(r.loggedAt) >= garbageLogPeriod {
		r.log.Warn("ignoring datagrams that are not MPEG-TS", "count", r.garbage)
		r.loggedAt = now
	}
}
