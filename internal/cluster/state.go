package cluster

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// maxErrorLen bounds the last error a node writes about a record.
const maxErrorLen = 2000

// RecordState is the process state of a record as its owner last wrote it on the lease.
type RecordState struct {
	// Record is the record's id.
	Record string
	// State is the owner's process state (running, starting, …); empty before the first write.
	State string
	// Since is when the owner saw State begin (the owner's clock).
	Since     time.Time
	LastError string
	Restarts  int
}

// Owner is a record's live lease: the node that runs it, and the state it wrote.
type Owner struct {
	// Node is the holder's id.
	Node string
	RecordState
}

// SetStates writes the process states of records this node holds onto their leases, in one
// statement; a lease this node no longer holds (another generation) is left alone.
func (n *Node) SetStates(ctx context.Context, states []RecordState) error {
	if len(states) == 0 {
		return nil
	}
	held := n.Held()
	var (
		ids, names, errs []string
		gens             []int64
		since            []time.Time
		restarts         []int64
	)
	for _, s := range states {
		g, ok := held[s.Record]
		if !ok {
			continue
		}
		e := textColumn(s.LastError, maxErrorLen)
		ids, gens, names, errs = append(ids, s.Record), append(gens, g), append(names, s.State), append(errs, e)
		since, restarts = append(since, s.Since), append(restarts, int64(s.Restarts))
	}
	if len(ids) == 0 {
		return nil
	}
	_, err := n.db.ExecContext(ctx, `
UPDATE leases AS l SET state = h.state, state_since = h.since, last_error = h.last_error, restarts = h.restarts
FROM unnest($2::text[], $3::bigint[], $4::text[], $5::timestamptz[], $6::text[], $7::bigint[])
	AS h (record_id, generation, state, since, last_error, restarts)
WHERE l.record_id = h.record_id AND l.generation = h.generation AND l.node_id = $1`,
		n.opts.ID, ids, gens, names, since, errs, restarts)
	if err != nil {
		return fmt.Errorf("node %q: write the states of %d records: %w", n.opts.ID, len(ids), err)
	}
	return nil
}

// textColumn is s as a PostgreSQL text column takes it: valid UTF-8 without NUL bytes (an
// error quoting a child's stderr may hold any bytes, which would fail the whole statement), at
// most limit bytes, cut between characters.
func textColumn(s string, limit int) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// OwnerOf is record's live lease holder and the state it wrote; ok is false when no node holds
// a live lease on it.
func (n *Node) OwnerOf(ctx context.Context, record string) (o Owner, ok bool, err error) {
	var since sql.NullTime
	err = n.db.QueryRowContext(ctx, `
SELECT node_id, state, state_since, last_error, restarts FROM leases
WHERE record_id = $1 AND node_id IS NOT NULL AND expires > now()`, record).
		Scan(&o.Node, &o.State, &since, &o.LastError, &o.Restarts)
	if errors.Is(err, sql.ErrNoRows) {
		return Owner{}, false, nil
	}
	if err != nil {
		return Owner{}, false, fmt.Errorf("cluster: read the owner of record %q: %w", record, err)
	}
	o.Record, o.Since = record, since.Time
	return o, true, nil
}
