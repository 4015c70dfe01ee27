package cluster

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/sluicemedia/sluice/internal/redact"
)

// schemaVersion is the store's migration that made the nodes and leases tables.
const schemaVersion = 3

// maxConns bounds a Node's connections: Run uses one at a time, API calls a few more.
const maxConns = 4

// Node is one sluice process in a cluster: it registers itself, heartbeats, and holds leases.
// Its methods are safe for concurrent use.
type Node struct {
	db   *sql.DB
	url  string // the database's URL, for Listen's own connection
	opts Options
	log  *slog.Logger

	mu   sync.Mutex
	held map[string]int64 // record id → the generation this node took
	// extended is, for each lease held, when the Acquire or renewal that last extended it was
	// sent (local monotonic clock): the database set its expiry at least LeaseTTL after that.
	extended map[string]time.Time
	draining bool // as the last heartbeat read it
}

// Open connects to the PostgreSQL database at dbURL (which the store has migrated) and registers
// the node: its row is written with a new start time, not draining. Call Run for the heartbeats
// and renewals, and Close at the end.
func Open(ctx context.Context, dbURL string, opts Options) (*Node, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	where := redact.URL(dbURL)
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		return nil, fmt.Errorf("cluster: open %s: %w", where, redact.Error(err, dbURL))
	}
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	n := &Node{db: db, url: dbURL, opts: opts, log: opts.Log.With("node", opts.ID), held: map[string]int64{},
		extended: map[string]time.Time{}}
	if err := n.register(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("cluster: %s: %w", where, redact.Error(err, dbURL))
	}
	return n, nil
}

// ID is the node's id.
func (n *Node) ID() string { return n.opts.ID }

// register checks the schema and writes the node's row.
func (n *Node) register(ctx context.Context) error {
	var version int
	if err := n.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).
		Scan(&version); err != nil {
		return fmt.Errorf("read the schema version (open the store first): %w", err)
	}
	if version < schemaVersion {
		return fmt.Errorf("schema version %d has no nodes and leases (%d): open the store first", version, schemaVersion)
	}
	capa, err := n.capacity()
	if err != nil {
		return err
	}
	// The old row is read in the same statement, to warn of a node id still heartbeating.
	var wasLive sql.NullBool
	err = n.db.QueryRowContext(ctx, `
WITH old AS (SELECT heartbeat > now() - $5::float8 * interval '1 millisecond' AS live FROM nodes WHERE id = $1)
INSERT INTO nodes (id, api_url, public_url, capacity, started, heartbeat, draining)
VALUES ($1, $2, $3, $4::jsonb, now(), now(), false)
ON CONFLICT (id) DO UPDATE SET api_url = EXCLUDED.api_url, public_url = EXCLUDED.public_url,
	capacity = EXCLUDED.capacity, started = now(), heartbeat = now(), draining = false
RETURNING (SELECT live FROM old)`,
		n.opts.ID, n.opts.APIURL, n.opts.PublicURL, capa, ms(n.opts.LeaseTTL)).Scan(&wasLive)
	if err != nil {
		return fmt.Errorf("register node %q: %w", n.opts.ID, err)
	}
	if wasLive.Valid && wasLive.Bool {
		n.log.Warn("cluster: a node with this id heartbeat within the lease TTL: a restart, or another process with the same id",
			"lease_ttl", n.opts.LeaseTTL)
	}
	n.log.Info("cluster: node registered", "api_url", n.opts.APIURL, "public_url", n.opts.PublicURL)
	return nil
}

// capacity is the node's capacity as JSON.
func (n *Node) capacity() (string, error) {
	var c Capacity
	if n.opts.Capacity != nil {
		c = n.opts.Capacity()
	}
	b, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("node %q: capacity %+v: %w", n.opts.ID, c, err)
	}
	return string(b), nil
}

// Heartbeat writes the node's heartbeat and capacity (registering it again if its row went) and
// reads whether it is draining.
func (n *Node) Heartbeat(ctx context.Context) error {
	capa, err := n.capacity()
	if err != nil {
		return err
	}
	var draining bool
	err = n.db.QueryRowContext(ctx, `
INSERT INTO nodes (id, api_url, public_url, capacity, started, heartbeat)
VALUES ($1, $2, $3, $4::jsonb, now(), now())
ON CONFLICT (id) DO UPDATE SET capacity = EXCLUDED.capacity, heartbeat = now()
RETURNING draining`, n.opts.ID, n.opts.APIURL, n.opts.PublicURL, capa).Scan(&draining)
	if err != nil {
		return fmt.Errorf("node %q: heartbeat: %w", n.opts.ID, err)
	}
	n.mu.Lock()
	was := n.draining
	n.draining = draining
	n.mu.Unlock()
	if draining != was {
		n.log.Info("cluster: draining changed", "draining", draining)
	}
	return nil
}

// Draining tells whether the node was draining at its last heartbeat: it takes no new records
// and should hand back the ones it holds.
func (n *Node) Draining() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.draining
}

// Run heartbeats and renews the leases every Renew until ctx ends, then returns nil. Leases
// found lost go to Options.Lost. A node that has not renewed for LeaseTTL minus Renew (the
// database unreachable or slow) reports every lease it holds lost at that moment, a Renew
// before any other node can take them over, so that its records stop in time. Run does not
// release the leases at the end: stop the records first, then call ReleaseAll or Leave.
func (n *Node) Run(ctx context.Context) error {
	failing := false
	for {
		err := n.tick(ctx)
		switch {
		case err != nil && !failing && ctx.Err() == nil:
			// Logged once a run of failures; fencing logs on its own.
			n.log.Warn("cluster: heartbeat or renewal failed; retrying every renewal interval", "error", err)
			failing = true
		case err == nil && failing:
			n.log.Info("cluster: heartbeats and renewals succeed again")
			failing = false
		}
		timer := time.NewTimer(n.nextTick())
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		}
	}
}

// tick is one heartbeat and renewal, bounded by Renew and by the fencing deadline.
func (n *Node) tick(ctx context.Context) error {
	n.lose(n.fenceIfStale())
	deadline := time.Now().Add(n.opts.Renew)
	if at, ok := n.fenceAt(); ok && at.After(time.Now()) && at.Before(deadline) {
		deadline = at
	}
	hctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	herr := n.Heartbeat(hctx)
	lost, rerr := n.Renew(hctx)
	if rerr != nil {
		lost = n.fenceIfStale()
	}
	n.lose(lost)
	return errors.Join(herr, rerr)
}

// lose hands records whose leases were lost to Options.Lost.
func (n *Node) lose(lost []string) {
	if len(lost) == 0 {
		return
	}
	n.log.Warn("cluster: leases lost; their records must stop", "records", lost)
	if n.opts.Lost != nil {
		n.opts.Lost(lost)
	}
}

// nextTick is the wait before the next tick: Renew, or less when the fencing deadline comes
// first.
func (n *Node) nextTick() time.Duration {
	wait := n.opts.Renew
	if at, ok := n.fenceAt(); ok {
		wait = max(0, min(wait, time.Until(at)))
	}
	return wait
}

// fenceAt is when the leases held count as lost without a renewal: LeaseTTL minus Renew after
// the oldest of the Acquires and renewals that last extended them was sent (the database's
// expiry is at least LeaseTTL after it). ok is false when nothing is held.
func (n *Node) fenceAt() (at time.Time, ok bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	oldest, ok := n.oldestExtended()
	return oldest.Add(n.opts.LeaseTTL - n.opts.Renew), ok
}

// oldestExtended is the earliest time a lease held was last extended; ok is false when nothing
// is held. n.mu held.
func (n *Node) oldestExtended() (oldest time.Time, ok bool) {
	for id := range n.held {
		if at := n.extended[id]; !ok || at.Before(oldest) {
			oldest, ok = at, true
		}
	}
	return oldest, ok
}

// fenceIfStale forgets every lease held once the fencing deadline passed, and returns their
// records.
func (n *Node) fenceIfStale() []string {
	at, ok := n.fenceAt()
	if !ok || time.Now().Before(at) {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	oldest, _ := n.oldestExtended()
	lost := make([]string, 0, len(n.held))
	for id := range n.held {
		lost = append(lost, id)
	}
	clear(n.held)
	clear(n.extended)
	slices.Sort(lost)
	n.log.Error("cluster: no renewal for too long; every lease counts as lost",
		"since", time.Since(oldest).Round(time.Millisecond), "lease_ttl", n.opts.LeaseTTL)
	return lost
}

// Close closes the node's connections. It does not release the leases (ReleaseAll) nor remove
// the node's row (Leave).
func (n *Node) Close() error {
	return n.db.Close()
}

// Leave releases every lease held and removes the node's row: a clean stop, after the node's
// records stopped. The node cannot be used afterwards except for Close.
func (n *Node) Leave(ctx context.Context) error {
	if err := n.ReleaseAll(ctx); err != nil {
		return err
	}
	if _, err := n.db.ExecContext(ctx, `DELETE FROM nodes WHERE id = $1`, n.opts.ID); err != nil {
		return fmt.Errorf("node %q: leave: %w", n.opts.ID, err)
	}
	n.log.Info("cluster: node left")
	return nil
}

// ms is d in milliseconds, for `$n::float8 * interval '1 millisecond'`.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
