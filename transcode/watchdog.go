package transcode

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"
)

// progressFeed accepts ffmpeg's -progress connection on a Unix socket and reads it.
type progressFeed struct {
	ln net.Listener

	mu      sync.Mutex
	conn    net.Conn
	stopped bool
}

func newProgressFeed(ln net.Listener) *progressFeed { return &progressFeed{ln: ln} }

// read accepts one connection and hands each report to report, until the connection or the
// listener closes.
func (f *progressFeed) read(report func(Progress)) {
	conn, err := f.ln.Accept()
	if err != nil {
		return
	}
	f.mu.Lock()
	if f.stopped {
		f.mu.Unlock()
		conn.Close()
		return
	}
	f.conn = conn
	f.mu.Unlock()
	var p progressParser
	sc := bufio.NewScanner(conn)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		if pr, ok := p.line(sc.Text()); ok {
			pr.At = time.Now()
			report(pr)
		}
	}
}

// stop closes the listener and the connection; idempotent.
func (f *progressFeed) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return
	}
	f.stopped = true
	f.ln.Close()
	if f.conn != nil {
		f.conn.Close()
	}
}

// report records a progress report; the stall clock starts over when the output time or the
// frame count moved.
func (j *Job) report(p Progress) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if p.OutTime > j.prog.OutTime || p.Frame > j.prog.Frame {
		j.advanced = p.At
	}
	j.prog = p
}

// restartStallClock opens a new window for ffmpeg to progress in, when feeding (re)starts.
func (j *Job) restartStallClock(now time.Time) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if now.After(j.advanced) {
		j.advanced = now
	}
}

// watchdog kills ffmpeg when it made no progress for StallTimeout while it was fed (a write
// was under way or ended within StallTimeout), or when it has not finished StallTimeout after
// the input stream closed. A stalled ffmpeg gets SIGKILL at once: it will not honour SIGINT.
func (j *Job) watchdog(ctx context.Context, cmdDone <-chan struct{}, fail func(error)) {
	timeout := j.cfg.StallTimeout
	tick := time.NewTicker(min(timeout/4, 500*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			var err error
			if ended := j.ended.Load(); ended != 0 {
				if now.Sub(time.Unix(0, ended)) > timeout {
					err = fmt.Errorf("transcode: %w: not finished %v after the input ended", ErrStalled, timeout)
				}
			} else if j.stalled(now, timeout) {
				p := j.Progress()
				err = fmt.Errorf("transcode: %w: no progress for %v (frame %d, output time %v)", ErrStalled, timeout, p.Frame, p.OutTime)
			}
			if err != nil {
				j.log.Warn("killing ffmpeg", "error", err)
				fail(err)
				select {
				case <-cmdDone: // reaped: the group id may be reused
				default:
					if pid := j.pid.Load(); pid > 0 {
						_ = syscall.Kill(-int(pid), syscall.SIGKILL)
					}
				}
				return
			}
		}
	}
}

// stalled tells whether ffmpeg's output stood still for timeout while it was being fed.
func (j *Job) stalled(now time.Time, timeout time.Duration) bool {
	j.mu.Lock()
	adv := j.advanced
	j.mu.Unlock()
	if adv.IsZero() || now.Sub(adv) < timeout {
		return false
	}
	return j.writing.Load() || now.Sub(time.Unix(0, j.lastFed.Load())) < timeout
}
