package cluster

import (
	"errors"
	"fmt"
	"time"
)

// ErrUnknownRecord is wrapped when a lease is asked for a record that does not exist.
var ErrUnknownRecord = errors.New("no such record")

// ErrUnknownNode is wrapped when a node id names no registered node.
var ErrUnknownNode = errors.New("no such node")

// ErrNodeDown is wrapped when a node that holds something is not running or has no API URL.
var ErrNodeDown = errors.New("node not running or without an API URL")

// ErrNoNode is wrapped when Place finds no live node that is not draining and has room.
var ErrNoNode = errors.New("no live node with room")

// HeldError tells that a record's lease is live and held by another node. errors.Is(err,
// ErrHeld) matches it.
type HeldError struct {
	// Record is the record asked for.
	Record string
	// Node is the holder's id; Expires its lease's expiry (database clock).
	Node    string
	Expires time.Time
}

// ErrHeld is matched by every *HeldError.
var ErrHeld = errors.New("lease held by another node")

// Error says who holds the record, e.g. `record "abc": lease held by node "b" until 10:00:03.5`.
func (e *HeldError) Error() string {
	return fmt.Sprintf("record %q: lease held by node %q until %s",
		e.Record, e.Node, e.Expires.UTC().Format("15:04:05.000"))
}

// Is makes errors.Is(err, ErrHeld) true for a *HeldError.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }
