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
