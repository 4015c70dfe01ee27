package transcode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/opt"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/supervisor"
	"github.com/sluicemedia/sluice/packager/mpegts"
)

// DefaultStallTimeout is how long ffmpeg may go without progress while fed before a Job
// kills it.
const DefaultStallTimeout = 10 * time.Second

// JobConfig configures a Job.
type JobConfig struct {
	// FFmpeg is the ffmpeg program; default "ffmpeg" from PATH.
	FFmpeg string
	// Args are ffmpeg's arguments, from Args: MPEG-TS on stdin to MPEG-TS on stdout. The Job
	// puts -progress (to a Unix socket of its own) before them.
	Args []string
	// Input is the Stream to transcode; the Job reads it with a Reader of its own.
	Input *stream.Stream
	// Tracks, when set, are the input tracks Args were built from: if the input's differ when
	// the Job starts, Run fails with ErrInputChanged at once.
	Tracks []media.Track
	// Output is the Stream the Job publishes ffmpeg's output into, one publisher session per
	// Run. The caller owns it; the Job never closes it.
	Output *stream.Stream
	// Log receives start, stop and ignored-input messages; default slog.Default().
	Log *slog.Logger
	// StallTimeout is how long ffmpeg may make no progress (its output time stands still)
	// while input is fed before it is killed and Run fails with ErrStalled; it also bounds how
	// long ffmpeg may take to finish once the input stream closed. Default 10 s.
	StallTimeout time.Duration
	// Grace is how long ffmpeg has to exit after SIGINT before SIGKILL; default 3 s.
	Grace time.Duration
	// OnStart, if set, is called with ffmpeg's process id once it started; it must return
	// quickly.
	OnStart func(pid int)
}

// Job runs ffmpeg between two Streams: it muxes the input's units into MPEG-TS on ffmpeg's
// stdin, demuxes ffmpeg's stdout and publishes the result into the output Stream. Run it once.
type Job struct {
	cfg JobConfig
	log *slog.Logger

	mu       sync.Mutex
	prog     Progress
	advanced time.Time // when the output time last moved, or a new feeding window opened

	pid     atomic.Int64
	lastFed atomic.Int64 // unix ns of the latest write to ffmpeg
	writing atomic.Bool  // a write to ffmpeg is under way (it may be blocked)
	ended   atomic.Int64 // unix ns when the input stream closed; 0 while open
}

// NewJob returns a Job for cfg.
func NewJob(cfg JobConfig) *Job {
	opt.Zero(&cfg.FFmpeg, "ffmpeg")
	opt.Positive(&cfg.StallTimeout, DefaultStallTimeout)
	opt.Zero(&cfg.Log, slog.Default())
	return &Job{cfg: cfg, log: cfg.Log.With("component", "transcode")}
}

// Progress returns ffmpeg's last progress report; zero before the first.
func (j *Job) Progress() Progress {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.prog
}

// Run waits for the input's first unit, starts ffmpeg and transcodes until ctx ends (it then
// returns ctx's error), ffmpeg fails (an error quoting its last stderr lines), stalls
// (ErrStalled), or the input's tracks change (ErrInputChanged). It returns nil once the input
// Stream closed and ffmpeg finished its output. Every goroutine it starts has ended, and
// ffmpeg is reaped, when it returns.
func (j *Job) Run(ctx context.Context) error {
	cfg := j.cfg
	if cfg.Input == nil || cfg.Output == nil {
		return errors.New("transcode: job needs an input and an output stream")
	}
	rd, err := cfg.Input.NewReader("transcode")
	if err != nil {
		return fmt.Errorf("transcode: input: %w", err)
	}
	defer rd.Close()
	first, err := rd.Read(ctx)
	switch {
	case errors.Is(err, io.EOF):
		return nil // the input stream closed before any media
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		return fmt.Errorf("transcode: input: %w", err)
	}
	tracks := cfg.Input.Tracks()
	if cfg.Tracks != nil && !media.SameFormat(cfg.Tracks, tracks) {
		return fmt.Errorf("transcode: %w: arguments built for %s, input has %s", ErrInputChanged, describe(cfg.Tracks), describe(tracks))
	}
	rmx, err := mpegts.NewRemuxer(tracks, cfg.Input)
	if err != nil {
		return fmt.Errorf("transcode: input %s: %w", describe(tracks), err)
	}
	return j.run(ctx, rd, rmx, first)
}

// pipes are ffmpeg's stdin and stdout; the child's ends are closed once it started.
type pipes struct {
	inR, inW, outR, outW *os.File
}

func newPipes() (*pipes, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	return &pipes{inR, inW, outR, outW}, nil
}

// closeChild closes the ends the child holds a copy of; idempotent.
func (p *pipes) closeChild() {
	p.inR.Close()
	p.outW.Close()
}

func (p *pipes) close() {
	p.closeChild()
	p.inW.Close()
	p.outR.Close()
}

// run starts ffmpeg and the goroutines around it, and waits for all of them.
func (j *Job) run(ctx context.Context, rd *stream.Reader, rmx *mpegts.Remuxer, first *media.AccessUnit) error {
	cfg := j.cfg
	dir, err := os.MkdirTemp("", "sluice-transcode-")
	if err != nil {
		return fmt.Errorf("transcode: progress socket: %w", err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "progress.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return fmt.Errorf("transcode: progress socket: %w", err)
	}
	feed := newProgressFeed(ln)
	defer feed.stop()
	p, err := newPipes()
	if err != nil {
		return fmt.Errorf("transcode: pipes: %w", err)
	}
	defer p.close()

	j.mu.Lock()
	j.prog, j.advanced = Progress{}, time.Time{}
	j.mu.Unlock()
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var fe firstError
	fail := func(err error) {
		fe.set(err)
		cancel()
	}
	cmd := supervisor.Command{
		Path:   cfg.FFmpeg,
		Args:   append([]string{"-progress", "unix:" + sock}, cfg.Args...),
		Stdin:  p.inR,
		Stdout: p.outW,
		Grace:  cfg.Grace,
		Logger: j.log,
		OnStart: func(pid int) {
			j.pid.Store(int64(pid))
			p.closeChild()
			j.log.Info("ffmpeg started", "pid", pid)
			if cfg.OnStart != nil {
				cfg.OnStart(pid)
			}
		},
	}

	var wg sync.WaitGroup
	cmdDone := make(chan struct{})
	var cmdErr error
	wg.Go(func() {
		defer close(cmdDone)
		cmdErr = cmd.Run(cctx)
		p.closeChild() // when ffmpeg never started
	})
	wg.Go(func() {
		err := j.feed(cctx, rd, rmx, first, p.inW)
		p.inW.Close() // ffmpeg finishes at the end of its input
		if err != nil && cctx.Err() == nil {
			fail(err)
		}
	})
	wg.Go(func() {
		if err := j.publish(p.outR); err != nil {
			fail(err)
			_, _ = io.Copy(io.Discard, p.outR) // let ffmpeg flush and exit
		}
	})
	wg.Go(func() { feed.read(j.report) })
	wg.Go(func() { j.watchdog(cctx, cmdDone, fail) })

	<-cmdDone
	cancel()
	feed.stop()
	wg.Wait()

	prog := j.Progress()
	switch {
	case fe.get() != nil:
		err = fe.get()
	case ctx.Err() != nil:
		err = ctx.Err()
	case cmdErr != nil:
		err = fmt.Errorf("transcode: %w", cmdErr)
	case j.ended.Load() != 0:
		err = nil
	default:
		err = fmt.Errorf("transcode: ffmpeg exited unexpectedly at frame %d, output time %v", prog.Frame, prog.OutTime)
	}
	j.log.Info("ffmpeg stopped", "error", err, "frame", prog.Frame, "out_time", prog.OutTime)
	return err
}

// firstError keeps the first error set.
type firstError struct {
	mu  sync.Mutex
	err error
}

func (f *firstError) set(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
	}
}

func (f *firstError) get() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}
