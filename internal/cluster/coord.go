package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicemedia/sluice/internal/opt"
)

// Processes is what a Coordinator needs of the server's process manager. Stop, Restart, Remove
// and StartHere are called with the record's lifecycle lock held (Lock).
type Processes interface {
	// Running lists the records with a process on this node.
	Running() []Ref
	// Runs tells whether the record has a process on this node.
	Runs(r Ref) bool
	// Lock waits for the record's lifecycle lock.
	Lock(ctx context.Context, r Ref) (unlock func(), err error)
	// StartHere starts a record placed on this node, without placing it again. A record gone
	// from the store is not an error.
	StartHere(ctx context.Context, r Ref) error
	Stop(ctx context.Context, r Ref) error
	Restart(ctx context.Context, r Ref) error
	Remove(ctx context.Context, r Ref) error
	// Fence stops the record's process at once. Its lease is lost (another node may run the
	// record already), so nothing is handed back.
	Fence(r Ref)
	// State is the process state of a record running here (its Record field is ignored).
	State(r Ref) RecordState
}

// Records is what a Coordinator reads of the stored records.
type Records interface {
	// Active lists the active records.
	Active(ctx context.Context) ([]Ref, error)
	// Lookup reads one record: whether it is active, and the server module it reads (its
	// affinity; "" for none). ok is false when it is gone or cannot be read.
	Lookup(ctx context.Context, r Ref) (active bool, affinity string, ok bool)
	// Rank orders the modules whose records run processes (server modules first); ok is false
	// for a module whose records run none.
	Rank(module string) (rank int, ok bool)
}

// CoordinatorOptions configure a Coordinator.
type CoordinatorOptions struct {
	// Node configures the node. Its Capacity and Lost are the coordinator's own.
	Node Options
	// Procs and Records are the server's process manager and store. Required.
	Procs   Processes
	Records Records
	// Capacity measures what the node reports at each heartbeat. Default: the zero Meter
	// (no ffmpeg limit, CPU not counted).
	Capacity Meter
	// ValidID tells a string that can be a record id; Elsewhere looks no other up. Default:
	// every id.
	ValidID func(id string) bool
	// Files deletes from this node's disk the recorded files whose entries were removed
	// through other nodes (queued in the store for this node). It runs at start, every renewal
	// interval, and when another node tells this one (OpFiles); never twice at once. Default:
	// none.
	Files func(ctx context.Context)
}

// Notification operations, the first word of a payload "op module id [node]".
const (
	OpStart   = "start"   // "start module id node": node should take the record
	OpStop    = "stop"    // the owner stops the record (it is no longer active)
	OpRestart = "restart" // the owner restarts it with its stored settings
	OpRemove  = "remove"  // the owner stops and forgets it (it is being removed)
	// OpFiles, "files module id node": node deletes the files of the record queued for it
	// (CoordinatorOptions.Files).
	OpFiles = "files"
)

// StateEvery is how often the owner writes its records' changed states to their leases.
const StateEvery = time.Second

// maxNotifiedID bounds a record id in a notification.
const maxNotifiedID = 100

// Coordinator runs a server's records under the cluster's rules (issue 17): a record runs on
// this node only under its lease, a record is placed where Place picks, changes made through
// other nodes arrive by NOTIFY (and, when one is missed, by the round every renewal
// interval), orphans placed here start, a draining node hands its records back, and the owner
// writes its records' states onto their leases for the other nodes to read.
type Coordinator struct {
	node  *Node
	procs Processes
	recs  Records
	opts  CoordinatorOptions
	log   *slog.Logger
	// cpuBusy is the last CPU sample (math.Float64bits of 0 to 1).
	cpuBusy atomic.Uint64

	mu      sync.Mutex
	written map[string]RecordState // the state last written per record held

	// filesMu keeps opts.Files to one run at a time.
	filesMu sync.Mutex

	// serving remembers which node serves a player this one does not (Elsewhere).
	serving servingCache
}

// OpenCoordinator registers this server as a node of the cluster on the database at dbURL.
func OpenCoordinator(ctx context.Context, dbURL string, o CoordinatorOptions) (*Coordinator, error) {
	if o.Procs == nil || o.Records == nil {
		return nil, errors.New("cluster coordinator: Procs and Records are required")
	}
	if o.ValidID == nil {
		o.ValidID = func(string) bool { return true }
	}
	opt.Zero(&o.Node.Log, slog.Default())
	c := &Coordinator{procs: o.Procs, recs: o.Records, opts: o, written: map[string]RecordState{}}
	o.Node.Capacity = c.capacity
	o.Node.Lost = c.lost
	n, err := Open(ctx, dbURL, o.Node)
	if err != nil {
		return nil, err
	}
	c.node = n
	c.opts.Node = n.opts
	c.log = n.opts.Log.With("node", n.ID())
	return c, nil
}

// Node is the coordinator's node.
func (c *Coordinator) Node() *Node { return c.node }

// Run heartbeats, renews, listens for notifications, writes states, samples the CPU, and
// places orphans, until ctx ends.
func (c *Coordinator) Run(ctx context.Context) {
	renew, ttl := c.opts.Node.Renew, c.opts.Node.LeaseTTL
	var wg sync.WaitGroup
	wg.Go(func() { _ = c.node.Run(ctx) })
	wg.Go(func() { _ = c.node.Listen(ctx, renew, c.notified) })
	wg.Go(func() { every(ctx, StateEvery, ttl, c.writeStates) })
	wg.Go(func() { every(ctx, renew, ttl, c.sampleCPU) })
	wg.Go(func() { every(ctx, renew, ttl, c.reconcile) })
	if c.opts.Files != nil {
		wg.Go(func() { every(ctx, renew, ttl, c.files) })
	}
	wg.Wait()
}

// Leave hands the leases back and removes the node's row (after the records stopped), then
// closes the node's connections.
func (c *Coordinator) Leave(ctx context.Context) {
	if err := c.node.Leave(ctx); err != nil {
		c.log.Warn("cluster: leaving; the leases expire by themselves", "error", err)
	}
	_ = c.node.Close()
}

// every calls f at once and then every d until ctx ends, each call bounded by limit: a
// statement sent while the database could not be reached (a partition, a failover to another
// host) may otherwise wait for an answer for as long as the kernel keeps the connection (many
// minutes), and the rounds with it.
func every(ctx context.Context, d, limit time.Duration, f func(context.Context)) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		fctx, cancel := context.WithTimeout(ctx, limit)
		f(fctx)
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Claim decides whether this node runs the record now, from the process manager's start with
// the record's lock held: when place is set the record goes where Place picks (another node is
// told by NOTIFY), then this node takes the lease. false: another node runs it, or will.
func (c *Coordinator) Claim(ctx context.Context, r Ref, affinity string, place bool) (bool, error) {
	if c.node.Draining() {
		// Placed elsewhere by the other nodes' next round; a lease held here goes back.
		c.Released(ctx, r.ID)
		return false, nil
	}
	if place {
		target, err := c.node.Place(ctx, r.ID, affinity)
		if err != nil {
			// No node now: the record stays an orphan, placed by the next round.
			c.log.Warn("cluster: no node to place the record on; it waits for the next round", "module", r.Module, "id", r.ID, "error", err)
			return false, nil
		}
		if target != c.node.ID() {
			c.Tell(ctx, OpStart, r, target)
			return false, nil
		}
	}
	if _, err := c.node.Acquire(ctx, r.ID); err != nil {
		if errors.Is(err, ErrHeld) {
			c.log.Debug("cluster: another node holds the record", "module", r.Module, "id", r.ID, "error", err)
			return false, nil
		}
		return false, err
	}
	c.forget(r.ID)
	return true, nil
}

// Released hands a record's lease back after it stopped here.
func (c *Coordinator) Released(ctx context.Context, id string) {
	if err := c.node.Release(ctx, id); err != nil {
		c.log.Warn("cluster: release; the lease expires by itself", "id", id, "error", err)
	}
	c.forget(id)
}

// forget drops the state last written for a record, so that the next write is a full one.
func (c *Coordinator) forget(ids ...string) {
	c.mu.Lock()
	for _, id := range ids {
		delete(c.written, id)
	}
	c.mu.Unlock()
}

// Tell notifies every node of a change to a record this node does not run. A failed
// notification is logged: the owner still learns at its next round.
func (c *Coordinator) Tell(ctx context.Context, op string, r Ref, target string) {
	payload := op + " " + r.Module + " " + r.ID
	if target != "" {
		payload += " " + target
	}
	if err := c.node.Notify(ctx, payload); err != nil {
		c.log.Warn("cluster: notify failed; the owner acts at its next round", "payload", payload, "error", err)
	}
}

// notified acts on a notification: the owner of the record (or the node picked to run it)
// brings it in line with the store.
func (c *Coordinator) notified(payload string) {
	f := strings.Fields(payload)
	if len(f) < 3 || len(f) > 4 {
		return
	}
	op, r := f[0], Ref{Module: f[1], ID: f[2]}
	if _, runs := c.recs.Rank(r.Module); !runs || len(r.ID) > maxNotifiedID {
		return
	}
	here := c.procs.Runs(r)
	c.log.Debug("cluster: notified", "op", op, "module", r.Module, "id", r.ID, "here", here)
	switch op {
	case OpStart:
		// Even when the record is here: a stop asked just before may still be under way
		// (its lease not yet released, so placement picked this node again). startHere waits
		// for the record's lock, so it starts the record once that stop is done, and does
		// nothing when it runs.
		if len(f) == 4 && f[3] == c.node.ID() {
			go c.startHere(r)
		}
	case OpStop, OpRestart, OpRemove:
		if here {
			go c.act(op, r)
		}
	case OpFiles:
		if len(f) == 4 && f[3] == c.node.ID() && c.opts.Files != nil {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), c.opts.Node.LeaseTTL)
				defer cancel()
				c.files(ctx)
			}()
		}
	}
}

// files runs opts.Files, one run at a time.
func (c *Coordinator) files(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	c.filesMu.Lock()
	defer c.filesMu.Unlock()
	c.opts.Files(ctx)
}

// startHere starts a record this node was picked for, without placing it again.
func (c *Coordinator) startHere(r Ref) {
	c.locked(r, func(ctx context.Context) {
		if err := c.procs.StartHere(ctx, r); err != nil {
			c.log.Warn("cluster: start of a record placed here", "module", r.Module, "id", r.ID, "error", err)
		}
	})
}

// locked runs f under the record's lifecycle lock, within a lease TTL; nothing runs when the
// lock cannot be had by then.
func (c *Coordinator) locked(r Ref, f func(ctx context.Context)) {
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.Node.LeaseTTL)
	defer cancel()
	unlock, err := c.procs.Lock(ctx, r)
	if err != nil {
		return
	}
	defer unlock()
	f(ctx)
}

// act carries out a stop, restart or remove asked through another node, on a record running
// here.
func (c *Coordinator) act(op string, r Ref) {
	c.locked(r, func(ctx context.Context) {
		var err error
		switch op {
		case OpRemove:
			err = c.procs.Remove(ctx, r)
		case OpRestart:
			err = c.procs.Restart(ctx, r)
		case OpStop:
			if active, _, ok := c.recs.Lookup(ctx, r); ok && active {
				return // started again meanwhile
			}
			err = c.procs.Stop(ctx, r)
		}
		if err != nil {
			c.log.Warn("cluster: acting on a change made through another node", "op", op, "module", r.Module, "id", r.ID, "error", err)
		}
	})
}

// lost stops at once the records whose leases this node lost (fencing); their leases are
// someone else's now, so nothing is released. It does not wait for the stops: it runs on the
// node's renewal loop, and a stop may take seconds (a child given its grace, then killed),
// during which the leases of the records still running here must go on being renewed.
func (c *Coordinator) lost(records []string) {
	c.forget(records...)
	lost := make(map[string]bool, len(records))
	for _, id := range records {
		lost[id] = true
	}
	for _, r := range c.procs.Running() {
		if lost[r.ID] {
			go c.procs.Fence(r)
		}
	}
}

// reconcile is the round every renewal interval: a draining node hands its records back;
// else records stopped through another node whose notification was missed stop, this node's
// earlier leases come back, and orphans placed here start.
func (c *Coordinator) reconcile(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	if c.node.Draining() {
		for _, r := range c.procs.Running() {
			if ctx.Err() != nil {
				return // the next round goes on
			}
			c.handBack(r)
		}
		return
	}
	active, err := c.recs.Active(ctx)
	if err != nil {
		c.log.Warn("cluster: list the active records", "error", err)
		return
	}
	isActive := make(map[Ref]bool, len(active))
	for _, r := range active {
		isActive[r] = true
	}
	for _, r := range c.procs.Running() {
		if !isActive[r] {
			go c.act(OpStop, r)
		}
	}
	// The leases of this id's earlier run (a restart with the same node id) come back at once:
	// their processes died with it.
	unheld, err := c.node.Unheld(ctx)
	if err != nil {
		c.log.Warn("cluster: list this node's earlier leases", "error", err)
		return
	}
	for _, r := range unheld {
		if !c.procs.Runs(r) {
			c.startHere(r)
		}
	}
	orphans, err := c.node.Orphans(ctx)
	if err != nil {
		c.log.Warn("cluster: list the orphans", "error", err)
		return
	}
	rank := func(r Ref) int { n, _ := c.recs.Rank(r.Module); return n }
	sort.SliceStable(orphans, func(i, j int) bool { return rank(orphans[i]) < rank(orphans[j]) })
	for _, r := range orphans {
		if _, runs := c.recs.Rank(r.Module); !runs || ctx.Err() != nil {
			continue
		}
		_, affinity, ok := c.recs.Lookup(ctx, r)
		if !ok {
			continue
		}
		if target, err := c.node.Place(ctx, r.ID, affinity); err != nil || target != c.node.ID() {
			continue
		}
		c.startHere(r)
	}
}

// handBack stops a record on a draining node and releases its lease, so another node takes it.
// It has a context of its own, as act does: a release cut short by the end of the round would
// leave the lease renewed here, the record stopped.
func (c *Coordinator) handBack(r Ref) {
	c.locked(r, func(ctx context.Context) {
		if err := c.procs.Stop(ctx, r); err != nil {
			c.log.Warn("cluster: hand back", "module", r.Module, "id", r.ID, "error", err)
		}
		c.log.Info("cluster: draining: record handed back", "module", r.Module, "id", r.ID)
	})
}

// writeStates writes the changed states of the records running here onto their leases.
func (c *Coordinator) writeStates(ctx context.Context) {
	var changed []RecordState
	held := c.node.Held()
	c.mu.Lock()
	for _, r := range c.procs.Running() {
		if _, ok := held[r.ID]; !ok {
			continue
		}
		rs := c.procs.State(r)
		rs.Record = r.ID
		if c.written[r.ID] != rs {
			changed = append(changed, rs)
		}
	}
	c.mu.Unlock()
	if len(changed) == 0 {
		return
	}
	if err := c.node.SetStates(ctx, changed); err != nil {
		if ctx.Err() == nil {
			c.log.Warn("cluster: write states", "error", err)
		}
		return
	}
	c.mu.Lock()
	for _, rs := range changed {
		c.written[rs.Record] = rs
	}
	c.mu.Unlock()
}

// RemoteState is the state of a record another node runs, as its owner wrote it on the lease
// ("starting" before the first write); ok is false when no other node holds it.
func (c *Coordinator) RemoteState(id string) (RecordState, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	o, ok, err := c.node.OwnerOf(ctx, id)
	if err != nil || !ok || o.Node == c.node.ID() {
		return RecordState{}, false
	}
	if o.State == "" {
		o.State = "starting"
	}
	return o.RecordState, true
}

// Owner is the id of the node holding the record's live lease, or "".
func (c *Coordinator) Owner(ctx context.Context, id string) string {
	o, ok, err := c.node.OwnerOf(ctx, id)
	if err != nil || !ok {
		return ""
	}
	return o.Node
}

// NodeAPI is the API URL of a live node other than this one; ok is false for this node or "".
func (c *Coordinator) NodeAPI(ctx context.Context, node string) (api string, ok bool, err error) {
	if node == "" || node == c.node.ID() {
		return "", false, nil
	}
	u, found, err := c.node.NodeURL(ctx, node)
	if err != nil {
		return "", true, err
	}
	if !found || !u.Live || u.API == "" {
		return "", true, fmt.Errorf("node %s, which holds it, is not running or has no URL (--cluster-api-url): %w", node, ErrNodeDown)
	}
	return u.API, true, nil
}

// capacity is what the node reports at each heartbeat.
func (c *Coordinator) capacity() Capacity {
	return c.opts.Capacity.measure(math.Float64frombits(c.cpuBusy.Load()), len(c.procs.Running()))
}

// sampleCPU measures the machine's CPU share in use, when the capacity counts it.
func (c *Coordinator) sampleCPU(ctx context.Context) {
	if share, ok := c.opts.Capacity.sampleCPU(ctx); ok {
		c.cpuBusy.Store(math.Float64bits(share))
	}
}
