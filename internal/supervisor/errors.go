package supervisor

import (
	"errors"
	"strings"
)

// ErrInputGone is what a RunFunc wraps when its input dropped. It is not a failure: the run
// restarts at once, in state Waiting, without counting a restart or growing the backoff.
var ErrInputGone = errors.New("input gone")

// errUnexpectedExit stands for a RunFunc that returned nil while its context was still live.
var errUnexpectedExit = errors.New("exited unexpectedly")

// Permanent marks err as not worth retrying: the supervisor goes to Failed and stays there.
// Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// IsPermanent tells whether err, or an error it wraps, was marked by Permanent.
func IsPermanent(err error) bool {
	var pe *permanentError
	return errors.As(err, &pe)
}

// permanentError keeps the message of the error it marks.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// exitErrorLines is how many stderr lines ExitError.Error quotes.
const exitErrorLines = 5

// ExitError is what Command.Run returns when the program exits with a non-zero status or on a
// signal it did not get from Run.
type ExitError struct {
	// Program is the base name of the program's path.
	Program string
	// Err is the *exec.ExitError: "exit status 3", "signal: killed".
	Err error
	// Stderr is the last lines the program wrote to stderr, oldest first (at most 20).
	Stderr []string
}

// Error says the program, how it exited, and quotes the end of its stderr.
func (e *ExitError) Error() string {
	msg := e.Program + ": " + e.Err.Error()
	if n := len(e.Stderr); n > 0 {
		msg += ": " + strings.Join(e.Stderr[max(0, n-exitErrorLines):], " | ")
	}
	return msg
}

// Unwrap returns Err.
func (e *ExitError) Unwrap() error { return e.Err }
