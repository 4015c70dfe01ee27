package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"path/filepath"
	"time"
)

// DefaultGrace is how long Command.Run waits after SIGINT before SIGKILL.
const DefaultGrace = 3 * time.Second

// start starts a child for Command.Run (startChild; tests choose how).
var start = startChild

// Command is a child process (ffmpeg) run in its own process group, at a lower CPU priority
// than the server (Nice, DefaultNice: 19 nice levels below). On Linux it is killed when the
// server dies (Pdeathsig), so no orphan outlives sluice.
type Command struct {
	// Path is the program; a name without a slash is looked up in PATH.
	Path string
	// Args are the arguments, without the program name.
	Args []string
	// Env is the environment as "KEY=value"; nil inherits the server's.
	Env []string
	// Dir is the working directory; empty is the server's.
	Dir string
	// Stdin feeds the program; nil is /dev/null. Unless it is an *os.File, Run copies it in a
	// goroutine and does not return before that copy ends, so the reader must return once ctx
	// ends (close the writer of an io.Pipe).
	Stdin io.Reader
	// Stdout receives the program's output; nil discards it.
	Stdout io.Writer
	// Grace is how long the program has to exit after SIGINT before SIGKILL; default 3 s. It
	// also bounds the wait for output pipes that a leftover process holds open.
	Grace time.Duration
	// KillOnStop, when ctx ends, kills the process group at once instead of SIGINT first: for
	// a program with nothing to close cleanly (a generator whose only output is a pipe that
	// this process stops reading), so that a stop frees its CPU at once.
	KillOnStop bool
	// Logger receives start, stop and (at debug level) stderr lines; default slog.Default().
	Logger *slog.Logger
	// Redact, when set, rewrites each argument and stderr line before it is logged or quoted
	// in an ExitError: for a command line that holds a secret (an input address with its
	// password or token).
	Redact func(string) string
	// OnStart, if set, is called with the process id once the program started. It must
	// return quickly.
	OnStart func(pid int)
}

// Run starts the program and waits for it. When ctx ends, it sends SIGINT to the process
// group, then SIGKILL after Grace, and returns ctx.Err() once the program is reaped. If the
// program exits by itself, Run kills what is left of its group and returns nil for status 0,
// else an *ExitError quoting the end of its stderr.
func (c Command) Run(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	prog := filepath.Base(c.Path)
	log := c.Logger
	if log == nil {
		log = slog.Default()
	}
	log = log.With("program", prog)
	grace := c.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	tail := newLineTail(log, c.Redact)

	cmd := exec.Command(c.Path, c.Args...)
	cmd.Env, cmd.Dir = c.Env, c.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.Stdin, c.Stdout, tail
	cmd.SysProcAttr = sysProcAttr()
	cmd.WaitDelay = grace
	release, niceErr, err := start(cmd, Nice())
	// Every return below comes after the child is reaped (or it never started).
	defer release()
	if err != nil {
		return fmt.Errorf("%s: %w", prog, err)
	}
	if niceErr != nil {
		warnNice(log, niceErr)
	}
	proc := cmd.Process
	defer adopt(proc.Pid)() // after the reap, like release
	log = log.With("pid", proc.Pid)
	log.Debug("started", "args", c.shownArgs())
	if c.OnStart != nil {
		c.OnStart(proc.Pid)
	}

	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	select {
	case err := <-waited:
		// The leader is reaped; its group id stays reserved while members are left, so
		// this reaches only them.
		_ = killGroup(proc)
		return c.exitError(prog, err, tail, log)
	case <-ctx.Done():
	}
	// A lowered child needs CPU time to exit or to close its outputs: it gets the server's
	// priority back first (see hurry).
	if err := hurry(proc.Pid); err != nil {
		log.Debug("priority not restored for the stop", "error", err)
	}
	if c.KillOnStop {
		log.Debug("killing")
		_ = killGroup(proc)
		<-waited
		return ctx.Err()
	}
	log.Debug("interrupting", "grace", grace)
	if err := interruptGroup(proc); err != nil {
		log.Debug("interrupt", "error", err)
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-waited:
	case <-t.C:
		log.Warn("no exit after SIGINT; killing", "grace", grace)
		_ = killGroup(proc)
		<-waited
	}
	_ = killGroup(proc)
	return ctx.Err()
}

// shownArgs are the arguments as the log shows them: through Redact.
func (c Command) shownArgs() []string {
	if c.Redact == nil {
		return c.Args
	}
	out := make([]string, len(c.Args))
	for i, a := range c.Args {
		out[i] = c.Redact(a)
	}
	return out
}

// exitError turns what cmd.Wait returned for a program that exited by itself into Run's
// result.
func (c Command) exitError(prog string, err error, tail *lineTail, log *slog.Logger) error {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, exec.ErrWaitDelay):
		// Status 0, but a leftover process held an output pipe open past Grace.
		log.Warn("exited, output pipes closed late", "error", err)
		return nil
	case errors.As(err, &ee):
		return &ExitError{Program: prog, Err: err, Stderr: tail.Lines()}
	}
	return fmt.Errorf("%s: %w", prog, err)
}

// RunFunc adapts the command to a Supervisor: it reports Running once the program started.
func (c Command) RunFunc() RunFunc {
	return func(ctx context.Context, rep Reporter) error {
		cc := c
		cc.OnStart = func(pid int) {
			if c.OnStart != nil {
				c.OnStart(pid)
			}
			rep.SetState(Running)
		}
		return cc.Run(ctx)
	}
}
