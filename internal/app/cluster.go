package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicemedia/sluice/api"
	"github.com/sluicemedia/sluice/internal/cluster"
	"github.com/sluicemedia/sluice/internal/procfs"
	"github.com/sluicemedia/sluice/internal/sysstats"
	"github.com/sluicemedia/sluice/storage"
)

// clusterNode wires a cluster.Node into the server when the store is PostgreSQL (issue 17):
// the Manager runs a record only under its lease, other nodes' records are read from the
// leases, and changes made through this node reach their owner by NOTIFY.
type clusterNode struct {
	node *cluster.Node
	st   *storage.Store
	mgr  *Manager
	log  *slog.Logger
	cfg  Config
	// cpuBusy is the last CPU sample (math.Float64bits of 0 to 1).
	cpuBusy atomic.Uint64

	mu      sync.Mutex
	written map[string]cluster.RecordState // the state last written per record held

	// serving remembers which node serves a player this one does not (cluster_playback.go).
	serving servingCache
	// fwd answers requests for what another node holds (--cluster-playback).
	fwd *cluster.Forwarder
}

// Notification operations, the first word of a payload "op module id [node]".
const (
	opStart   = "start"   // "start module id node": node should take the record
	opStop    = "stop"    // the owner stops the record (it is no longer active)
	opRestart = "restart" // the owner restarts it with its stored settings
	opRemove  = "remove"  // the owner stops and forgets it (it is being removed)
)

// stateEvery is how often the owner writes its records' changed states to their leases.
const stateEvery = time.Second

// openCluster registers this server as a node of the cluster on st's database.
func openCluster(ctx context.Context, cfg Config, st *storage.Store, mgr *Manager, log *slog.Logger) (*clusterNode, error) {
	c := &clusterNode{st: st, mgr: mgr, log: log.With("part", "cluster"), cfg: cfg, written: map[string]cluster.RecordState{}}
	fwd, err := cluster.NewForwarder(cfg.ClusterPlayback, api.WriteError, c.log)
	if err != nil {
		return nil, err
	}
	c.fwd = fwd
	public := cfg.ClusterPublicURL
	if public == "" {
		public = cfg.PublicURL
	}
	n, err := cluster.Open(ctx, cfg.Store, cluster.Options{
		ID: cfg.ClusterNodeID, APIURL: cfg.ClusterAPIURL, PublicURL: public,
		Capacity: c.capacity, Renew: cfg.ClusterRenew, LeaseTTL: cfg.ClusterLeaseTTL,
		Lost: c.lost, Log: c.log,
	})
	if err != nil {
		return nil, err
	}
	c.node = n
	c.log = c.log.With("node", n.ID())
	return c, nil
}

// run heartbeats, renews, listens for notifications, writes states, and places orphans, until
// ctx ends.
func (c *clusterNode) run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { _ = c.node.Run(ctx) })
	wg.Go(func() { _ = c.node.Listen(ctx, c.cfg.ClusterRenew, c.notified) })
	wg.Go(func() { c.every(ctx, stateEvery, c.writeStates) })
	wg.Go(func() { c.every(ctx, c.cfg.ClusterRenew, c.sampleCPU) })
	wg.Go(func() { c.every(ctx, c.cfg.ClusterRenew, c.reconcileAll) })
	wg.Wait()
}

// leave hands the leases back and removes the node's row (after the records stopped), then
// closes the node's connections.
func (c *clusterNode) leave(ctx context.Context) {
	if err := c.node.Leave(ctx); err != nil {
		c.log.Warn("cluster: leaving; the leases expire by themselves", "error", err)
	}
	_ = c.node.Close()
}

// every calls f at once and then every d until ctx ends.
func (c *clusterNode) every(ctx context.Context, d time.Duration, f func(context.Context)) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		f(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// capacity is what the node reports at each heartbeat.
func (c *clusterNode) capacity() cluster.Capacity {
	return cluster.Capacity{
		CPUs:      float64(runtime.NumCPU()),
		CPUBusy:   math.Float64frombits(c.cpuBusy.Load()),
		FFmpegMax: c.cfg.ClusterFFmpegMax,
		FFmpeg:    c.ffmpegChildren(),
	}
}

// sampleCPU measures the machine's CPU share in use, when --cluster-cpu counts it.
func (c *clusterNode) sampleCPU(ctx context.Context) {
	if !c.cfg.ClusterCPU {
		return
	}
	share, err := sysstats.CPUShare(ctx)
	if err != nil {
		return
	}
	c.cpuBusy.Store(math.Float64bits(share))
}

// ffmpegChildren counts this process's ffmpeg children (Linux: from /proc); elsewhere, the
// processes running.
func (c *clusterNode) ffmpegChildren() int {
	n, err := countChildren(os.Getpid(), filepath.Base(c.cfg.FFmpeg))
	if err != nil {
		return len(c.mgr.Running())
	}
	return n
}

// countChildren counts the live children of pid whose program (the first word of the command
// line, without its folder) is name.
func countChildren(pid int, name string) (int, error) {
	kids, err := procfs.Children(pid)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, k := range kids {
		if k.Zombie() {
			continue
		}
		if f := strings.Fields(procfs.Cmdline(k.PID)); len(f) > 0 && filepath.Base(f[0]) == name {
			n++
		}
	}
	return n, nil
}

// affinityOf is the server module a record reads, whose node it should run on.
func affinityOf(rec storage.Record) string {
	switch r := rec.(type) {
	case *storage.Player:
		return r.Input.InputServerID
	case *storage.Restream:
		return r.Input.InputServerID
	case *storage.Recording:
		return r.Input.InputServerID
	}
	return ""
}

// claim decides whether this node runs rec now, from Manager.Start with the record's lock held:
// when place is set the record goes where Place picks (another node is told by NOTIFY), then
// this node takes the lease. false: another node runs it, or will.
func (c *clusterNode) claim(ctx context.Context, mod storage.Module, id string, rec storage.Record, place bool) (bool, error) {
	if c.node.Draining() {
		// Placed elsewhere by the other nodes' next round; a lease held here goes back.
		c.released(ctx, id)
		return false, nil
	}
	if place {
		target, err := c.node.Place(ctx, id, affinityOf(rec))
		if err != nil {
			// No node now: the record stays an orphan, placed by the next round.
			c.log.Warn("cluster: no node to place the record on; it waits for the next round", "module", string(mod), "id", id, "error", err)
			return false, nil
		}
		if target != c.node.ID() {
			return false, c.tell(ctx, opStart, mod, id, target)
		}
	}
	if _, err := c.node.Acquire(ctx, id); err != nil {
		if errors.Is(err, cluster.ErrHeld) {
			c.log.Debug("cluster: another node holds the record", "module", string(mod), "id", id, "error", err)
			return false, nil
		}
		return false, err
	}
	c.mu.Lock()
	delete(c.written, id)
	c.mu.Unlock()
	return true, nil
}

// released hands a record's lease back after it stopped here.
func (c *clusterNode) released(ctx context.Context, id string) {
	if err := c.node.Release(ctx, id); err != nil {
		c.log.Warn("cluster: release; the lease expires by itself", "id", id, "error", err)
	}
	c.mu.Lock()
	delete(c.written, id)
	c.mu.Unlock()
}

// tell notifies every node of a change to a record this node does not run.
func (c *clusterNode) tell(ctx context.Context, op string, mod storage.Module, id, target string) error {
	payload := op + " " + string(mod) + " " + id
	if target != "" {
		payload += " " + target
	}
	if err := c.node.Notify(ctx, payload); err != nil {
		// The owner still learns at its next renewal round.
		c.log.Warn("cluster: notify failed; the owner acts at its next round", "payload", payload, "error", err)
	}
	return nil
}

// notified acts on a notification: the owner of the record (or the node picked to run it)
// brings it in line with the store.
func (c *clusterNode) notified(payload string) {
	f := strings.Fields(payload)
	if len(f) < 3 || len(f) > 4 {
		return
	}
	op, mod, id := f[0], storage.Module(f[1]), f[2]
	if _, runs := bootOrder[mod]; !runs || len(id) > 100 {
		return
	}
	here := c.mgr.get(mod, id) != nil
	c.log.Debug("cluster: notified", "op", op, "module", string(mod), "id", id, "here", here)
	switch op {
	case opStart:
		// Even when the record is here: a stop asked just before may still be under way
		// (its lease not yet released, so placement picked this node again). startHere waits
		// for the record's lock, so it starts the record once that stop is done, and does
		// nothing when it runs.
		if len(f) == 4 && f[3] == c.node.ID() {
			go c.startHere(mod, id)
		}
	case opStop, opRestart, opRemove:
		if here {
			go c.act(op, mod, id)
		}
	}
}

// startHere starts a record this node was picked for, without placing it again.
func (c *clusterNode) startHere(mod storage.Module, id string) {
	c.locked(mod, id, func(ctx context.Context) {
		if err := c.mgr.start(ctx, mod, id, false); err != nil && !errors.Is(err, storage.ErrNotFound) {
			c.log.Warn("cluster: start of a record placed here", "module", string(mod), "id", id, "error", err)
		}
	})
}

// locked runs f under the record's lifecycle lock, within a lease TTL; nothing runs when the
// lock cannot be had by then.
func (c *clusterNode) locked(mod storage.Module, id string, f func(ctx context.Context)) {
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.ClusterLeaseTTL)
	defer cancel()
	unlock, err := c.mgr.Lock(ctx, mod, id)
	if err != nil {
		return
	}
	defer unlock()
	f(ctx)
}

// act carries out a stop, restart or remove asked through another node, on a record running
// here.
func (c *clusterNode) act(op string, mod storage.Module, id string) {
	c.locked(mod, id, func(ctx context.Context) {
		var err error
		switch op {
		case opRemove:
			err = c.mgr.Remove(ctx, mod, id)
		case opRestart:
			err = c.mgr.Restart(ctx, mod, id)
		case opStop:
			if c.isActive(ctx, mod, id) {
				return // started again meanwhile
			}
			err = c.mgr.Stop(ctx, mod, id)
		}
		if err != nil {
			c.log.Warn("cluster: acting on a change made through another node", "op", op, "module", string(mod), "id", id, "error", err)
		}
	})
}

// isActive tells whether the stored record is active (false when gone or unreadable).
func (c *clusterNode) isActive(ctx context.Context, mod storage.Module, id string) bool {
	rec, err := newRecord(mod)
	if err != nil || c.st.Get(ctx, mod, id, rec) != nil {
		return false
	}
	return rec.Meta().Active
}

// lost stops at once the records whose leases this node lost (fencing); their leases are
// someone else's now, so nothing is released.
func (c *clusterNode) lost(records []string) {
	lost := map[string]bool{}
	c.mu.Lock()
	for _, id := range records {
		lost[id] = true
		delete(c.written, id)
	}
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, k := range c.mgr.Running() {
		if lost[k.id] {
			wg.Go(func() { c.mgr.fence(k.m, k.id) })
		}
	}
	wg.Wait()
}

// reconcileAll is the round every renewal interval: a draining node hands its records back;
// else orphans placed here start; records stopped, or updated, through another node whose
// notification was missed are brought in line.
func (c *clusterNode) reconcileAll(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	if c.node.Draining() {
		for _, k := range c.mgr.Running() {
			c.handBack(ctx, k)
		}
		return
	}
	active, err := c.st.ListActive(ctx)
	if err != nil {
		c.log.Warn("cluster: list the active records", "error", err)
		return
	}
	isActive := make(map[procKey]bool, len(active))
	for _, r := range active {
		isActive[procKey{r.Module, r.ID}] = true
	}
	for _, k := range c.mgr.Running() {
		if !isActive[k] {
			go c.act(opStop, k.m, k.id)
		}
	}
	// The leases of this id's earlier run (a restart with the same --cluster-node-id) come
	// back at once: their processes died with it.
	unheld, err := c.node.Unheld(ctx)
	if err != nil {
		c.log.Warn("cluster: list this node's earlier leases", "error", err)
		return
	}
	for _, o := range unheld {
		if mod := storage.Module(o.Module); c.mgr.get(mod, o.ID) == nil {
			c.startHere(mod, o.ID)
		}
	}
	orphans, err := c.node.Orphans(ctx)
	if err != nil {
		c.log.Warn("cluster: list the orphans", "error", err)
		return
	}
	sort.SliceStable(orphans, func(i, j int) bool {
		return bootOrder[storage.Module(orphans[i].Module)] < bootOrder[storage.Module(orphans[j].Module)]
	})
	for _, o := range orphans {
		mod := storage.Module(o.Module)
		if _, runs := bootOrder[mod]; !runs || ctx.Err() != nil {
			continue
		}
		rec, err := newRecord(mod)
		if err != nil || c.st.Get(ctx, mod, o.ID, rec) != nil {
			continue
		}
		target, err := c.node.Place(ctx, o.ID, affinityOf(rec))
		if err != nil || target != c.node.ID() {
			continue
		}
		c.startHere(mod, o.ID)
	}
}

// handBack stops a record on a draining node and releases its lease, so another node takes it.
func (c *clusterNode) handBack(ctx context.Context, k procKey) {
	unlock, err := c.mgr.Lock(ctx, k.m, k.id)
	if err != nil {
		return
	}
	defer unlock()
	if err := c.mgr.Stop(ctx, k.m, k.id); err != nil {
		c.log.Warn("cluster: hand back", "module", string(k.m), "id", k.id, "error", err)
	}
	c.log.Info("cluster: draining: record handed back", "module", string(k.m), "id", k.id)
}

// writeStates writes the changed states of the records running here onto their leases.
func (c *clusterNode) writeStates(ctx context.Context) {
	var changed []cluster.RecordState
	held := c.node.Held()
	c.mu.Lock()
	for _, k := range c.mgr.Running() {
		if _, ok := held[k.id]; !ok {
			continue
		}
		st := c.mgr.Status(k.m, k.id)
		rs := cluster.RecordState{Record: k.id, State: st.State, Since: st.Since, LastError: st.LastError, Restarts: st.Restarts}
		if c.written[k.id] != rs {
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

// remoteStatus is the status of a record another node runs, from its lease; ok is false when no
// other node holds it.
func (c *clusterNode) remoteStatus(mod storage.Module, id string) (api.Status, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	o, ok, err := c.node.OwnerOf(ctx, id)
	if err != nil || !ok || o.Node == c.node.ID() {
		return api.Status{}, false
	}
	st := api.Status{State: o.State, Since: o.Since, LastError: o.LastError, Restarts: o.Restarts}
	if st.State == "" {
		st.State = "starting"
	}
	return st, true
}

// Owner implements api.Cluster: the id of the node holding the record's live lease, or "".
func (c *clusterNode) Owner(ctx context.Context, _ storage.Module, id string) string {
	o, ok, err := c.node.OwnerOf(ctx, id)
	if err != nil || !ok {
		return ""
	}
	return o.Node
}

// Nodes implements api.Cluster.
func (c *clusterNode) Nodes(ctx context.Context) (any, error) {
	ns, err := c.node.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	if ns == nil {
		ns = []cluster.NodeInfo{}
	}
	return ns, nil
}

// Drain implements api.Cluster.
func (c *clusterNode) Drain(ctx context.Context, id string) error {
	err := c.node.Drain(ctx, id)
	if errors.Is(err, cluster.ErrUnknownNode) {
		return fmt.Errorf("node %q: %w", id, storage.ErrNotFound)
	}
	return err
}
