package supervisor

import "time"

// State is where a supervised run stands. The values are the ones the API exposes.
type State string

// States of a supervised run.
const (
	// Stopped: not started, or stopped by Stop.
	Stopped State = "stopped"
	// Starting: an attempt is being set up (dialling, spawning a process).
	Starting State = "starting"
	// Waiting: the run is up and waits for its input; also after an input drop.
	Waiting State = "waiting"
	// Running: media is flowing.
	Running State = "running"
	// Reconnecting: the last attempt failed; the next one starts after a backoff.
	Reconnecting State = "reconnecting"
	// Failed: a permanent error; no further attempt until Stop and Start.
	Failed State = "failed"
)

// Status is a snapshot of a supervised run.
type Status struct {
	// State is the current state.
	State State
	// Since is when State was entered.
	Since time.Time
	// LastError is the message of the last failure; empty if none since Start.
	LastError string
	// Restarts counts the failed attempts since Start; input drops do not count.
	Restarts int
}

// Combine is the status of runs that make one process, the input's first: failed if any
// failed, else reconnecting if any waits for a retry, else the first state that is not
// running; the restarts added up; the newest last error; Since is the first run's. With no
// runs the state is Running and Since is zero.
func Combine(runs []Status) Status {
	var st Status
	var lastErrAt time.Time
	st.State = Running
	for i, ps := range runs {
		st.Restarts += ps.Restarts
		if ps.LastError != "" && !ps.Since.Before(lastErrAt) {
			st.LastError, lastErrAt = ps.LastError, ps.Since
		}
		switch {
		case ps.State == Failed:
			st.State = Failed
		case ps.State == Reconnecting && st.State != Failed:
			st.State = Reconnecting
		case ps.State != Running && st.State == Running:
			st.State = ps.State
		}
		if i == 0 {
			st.Since = ps.Since
		}
	}
	return st
}
