package api

import (
	"net/http"
	"runtime"
	"slices"
)

// DefaultWriteWorkers is how many requests that change records (create, update, start, stop,
// remove, and the other routes that write to the store) run at once: two a CPU, at least 4.
func DefaultWriteWorkers() int { return max(4, 2*runtime.GOMAXPROCS(0)) }

// writeGate runs the handlers of record changes a few at a time. Each change costs the server a
// few milliseconds of CPU (validation, a store transaction, a process's start or stop), and Go
// runs goroutines that are ready in the order they became ready: before the gate, a client that
// sent 80 starts and removes at once (issue 13's start/remove race) put every other request,
// a dashboard's list or a player's playlist, in the queue behind all 80. Behind the gate the
// changes wait parked, costing no CPU, and another request waits behind at most the few that
// run. A change waits for its turn for as long as its client does: the HTTP server's timeouts
// and connection caps bound how many can wait.
type writeGate chan struct{}

func newWriteGate(workers int) writeGate { return make(writeGate, max(workers, 1)) }

// wrap runs h once a slot is free; a client that goes away while waiting gets nothing.
func (g writeGate) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case g <- struct{}{}:
		case <-r.Context().Done():
			return
		}
		defer func() { <-g }()
		h.ServeHTTP(w, r)
	})
}

// writes tells whether a route changes records: the ones that answer 507 when the disk is full.
func (rt route) writes() bool { return slices.Contains(rt.errs, http.StatusInsufficientStorage) }
