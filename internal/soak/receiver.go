package soak

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sluicemedia/sluice/internal/tooling"
)

// Receiver is an ffmpeg that reads MPEG-TS on a UDP port, as a restream's far end, and counts
// the video frames it got.
type Receiver struct {
	port   int
	cmd    *exec.Cmd
	frames atomic.Int64
	stderr bytes.Buffer
	done   chan struct{}
	err    error
}

// StartReceiver starts ffmpeg listening on udp://127.0.0.1:port.
func StartReceiver(ctx context.Context, ffmpeg string, port int) (*Receiver, error) {
	r := &Receiver{port: port, done: make(chan struct{})}
	in := fmt.Sprintf("udp://127.0.0.1:%d?overrun_nonfatal=1&fifo_size=100000", port)
	r.cmd = exec.Command(ffmpeg, "-hide_banner", "-loglevel", "error", "-nostdin",
		"-analyzeduration", "1000000", "-probesize", "1000000", "-i", in, "-map", "0", "-c", "copy", "-progress", "pipe:1", "-f", "null", "-")
	r.cmd.Stderr = &r.stderr
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("receiver on %d: %w", port, err)
	}
	if err := r.cmd.Start(); err != nil {
		return nil, fmt.Errorf("receiver on %d: start %s: %w", port, ffmpeg, err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "frame="); ok {
				if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
					r.frames.Store(n)
				}
			}
		}
		r.err = r.cmd.Wait()
		close(r.done)
	}()
	return r, nil
}

// URL is the address restreams send to.
func (r *Receiver) URL() string { return fmt.Sprintf("udp://127.0.0.1:%d", r.port) }

// Frames is the number of video frames received so far.
func (r *Receiver) Frames() int64 { return r.frames.Load() }

// Alive tells whether ffmpeg still runs.
func (r *Receiver) Alive() bool { return !tooling.Closed(r.done) }

// Stderr returns what ffmpeg printed on stderr (errors only).
func (r *Receiver) Stderr() string { return strings.TrimSpace(r.stderr.String()) }

// Stop interrupts ffmpeg, and kills it after 2 s: a UDP read with no data does not see the
// interrupt.
func (r *Receiver) Stop() {
	if !r.Alive() {
		return
	}
	tooling.StopGroup(r.cmd.Process.Pid, r.done, syscall.SIGINT, 2*time.Second)
}
