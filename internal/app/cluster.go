package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"

	"github.com/sluicemedia/sluice/api"
	"github.com/sluicemedia/sluice/internal/cluster"
	"github.com/sluicemedia/sluice/internal/supervisor"
	"github.com/sluicemedia/sluice/storage"
)

// clusterNode wires a cluster.Coordinator into the server when the store is PostgreSQL
// (issue 17): the Manager runs a record only under its lease, other nodes' records are read
// from the leases, and changes made through this node reach their owner by NOTIFY. It is the
// API's view of the cluster (api.Cluster).
type clusterNode struct {
	*cluster.Coordinator
	// fwd answers requests for what another node holds (--cluster-playback).
	fwd *cluster.Forwarder
	// mgr reports the file entries a removed node took with it.
	mgr *Manager
}

var _ api.Cluster = (*clusterNode)(nil)

// openCluster registers this server as a node of the cluster on st's database.
func openCluster(ctx context.Context, cfg Config, st *storage.Store, mgr *Manager, log *slog.Logger) (*clusterNode, error) {
	log = log.With("part", "cluster")
	fwd, err := cluster.NewForwarder(cfg.ClusterPlayback, api.WriteError, log)
	if err != nil {
		return nil, err
	}
	id := cfg.ClusterNodeID
	if id == "" {
		var made bool
		if id, made, err = cluster.KeptID(cfg.Data); err != nil {
			return nil, err
		}
		if made {
			log.Info("cluster: made this node's id, kept for its restarts", "id", id, "file", filepath.Join(cfg.Data, cluster.IDFile))
		}
	}
	public := cfg.ClusterPublicURL
	if public == "" {
		public = cfg.PublicURL
	}
	co, err := cluster.OpenCoordinator(ctx, cfg.Store, cluster.CoordinatorOptions{
		Node: cluster.Options{
			ID: id, APIURL: cfg.ClusterAPIURL, PublicURL: public,
			Renew: cfg.ClusterRenew, LeaseTTL: cfg.ClusterLeaseTTL, Log: log,
		},
		Procs:    clusterProcs{mgr},
		Records:  clusterRecords{st},
		Capacity: cluster.Meter{FFmpeg: cfg.FFmpeg, FFmpegMax: cfg.ClusterFFmpegMax, CPU: cfg.ClusterCPU, Children: supervisor.Children},
		ValidID:  storage.ValidID,
		Files:    mgr.removeQueuedFiles,
	})
	if err != nil {
		return nil, err
	}
	return &clusterNode{Coordinator: co, fwd: fwd, mgr: mgr}, nil
}

// Owner implements api.Cluster.
func (c *clusterNode) Owner(ctx context.Context, _ storage.Module, id string) string {
	return c.Coordinator.Owner(ctx, id)
}

// Nodes implements api.Cluster.
func (c *clusterNode) Nodes(ctx context.Context) (any, error) {
	ns, err := c.Node().Nodes(ctx)
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
	return nodeErr(id, c.Node().Drain(ctx, id))
}

// Resume implements api.Cluster.
func (c *clusterNode) Resume(ctx context.Context, id string) error {
	return nodeErr(id, c.Node().Resume(ctx, id))
}

// nodeErr makes an unknown node id of err a storage.ErrNotFound, as the API answers it.
func nodeErr(id string, err error) error {
	if errors.Is(err, cluster.ErrUnknownNode) {
		return fmt.Errorf("node %q: %w", id, storage.ErrNotFound)
	}
	return err
}

// Remove implements api.Cluster: a node down for good leaves the cluster with its file
// entries and queued removals (storage.Store.RetireNode), live as this node counts it (its
// heartbeat within this node's lease TTL, as Nodes shows it); each entry is reported as
// file_removed, since its bytes are out of reach for good.
func (c *clusterNode) Remove(ctx context.Context, id string) (files, queued int, err error) {
	gone, queued, err := c.mgr.store.RetireNode(ctx, id, c.Node().LeaseTTL())
	if err != nil {
		return 0, 0, err
	}
	for _, f := range gone {
		c.mgr.fileRemoved(f)
	}
	c.mgr.log.Info("cluster: node removed for good; its files are listed no more", "other_node", id,
		"files", len(gone), "queued_removals", queued)
	return len(gone), queued, nil
}

// Forward implements api.Cluster: a download of what node holds, when node is another one.
// Only the API's authenticated download routes call it, so the node lookup it costs is not
// rate-limited like the playback one.
func (c *clusterNode) Forward(w http.ResponseWriter, r *http.Request, node string) (bool, error) {
	base, elsewhere, err := c.NodeAPI(r.Context(), node)
	if errors.Is(err, cluster.ErrNodeDown) {
		return true, fmt.Errorf("%w: %w", err, api.ErrNotAvailable)
	}
	if err != nil {
		return true, err
	}
	if elsewhere {
		c.fwd.Forward(w, r, base)
	}
	return elsewhere, nil
}

// clusterRef and procRef convert between the cluster's names of a record and the store's.
func clusterRef(m storage.Module, id string) cluster.Ref {
	return cluster.Ref{Module: string(m), ID: id}
}
func procRef(r cluster.Ref) procKey { return procKey{storage.Module(r.Module), r.ID} }

// clusterRecords is the store as the coordinator reads it.
type clusterRecords struct{ st *storage.Store }

func (r clusterRecords) Active(ctx context.Context) ([]cluster.Ref, error) {
	refs, err := r.st.ListActive(ctx)
	out := make([]cluster.Ref, len(refs))
	for i, ref := range refs {
		out[i] = clusterRef(ref.Module, ref.ID)
	}
	return out, err
}

func (r clusterRecords) Lookup(ctx context.Context, ref cluster.Ref) (active bool, affinity string, ok bool) {
	rec, err := newRecord(storage.Module(ref.Module))
	if err != nil || r.st.Get(ctx, storage.Module(ref.Module), ref.ID, rec) != nil {
		return false, "", false
	}
	return rec.Meta().Active, affinityOf(rec), true
}

func (clusterRecords) Rank(module string) (int, bool) {
	n, ok := bootOrder[storage.Module(module)]
	return n, ok
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

// clusterProcs is the Manager as the coordinator drives it.
type clusterProcs struct{ m *Manager }

func (p clusterProcs) Running() []cluster.Ref {
	keys := p.m.Running()
	out := make([]cluster.Ref, len(keys))
	for i, k := range keys {
		out[i] = clusterRef(k.m, k.id)
	}
	return out
}

func (p clusterProcs) Runs(r cluster.Ref) bool { k := procRef(r); return p.m.get(k.m, k.id) != nil }

func (p clusterProcs) Lock(ctx context.Context, r cluster.Ref) (func(), error) {
	return p.m.locks.lock(ctx, procRef(r))
}

func (p clusterProcs) StartHere(ctx context.Context, r cluster.Ref) error {
	k := procRef(r)
	if err := p.m.start(ctx, k.m, k.id, false); err != nil && !errors.Is(err, storage.ErrNotFound) {
		return err
	}
	return nil
}

func (p clusterProcs) Stop(ctx context.Context, r cluster.Ref) error {
	k := procRef(r)
	return p.m.Stop(ctx, k.m, k.id)
}

func (p clusterProcs) Restart(ctx context.Context, r cluster.Ref) error {
	k := procRef(r)
	return p.m.Restart(ctx, k.m, k.id)
}

func (p clusterProcs) Remove(ctx context.Context, r cluster.Ref) error {
	k := procRef(r)
	return p.m.Remove(ctx, k.m, k.id)
}

func (p clusterProcs) Fence(r cluster.Ref) {
	k := procRef(r)
	if p.m.stop(k.m, k.id) {
		p.m.log.Warn("cluster: record stopped: its lease was lost", "module", r.Module, "id", r.ID)
	}
}

func (p clusterProcs) State(r cluster.Ref) cluster.RecordState {
	k := procRef(r)
	st := p.m.Status(k.m, k.id)
	return cluster.RecordState{State: st.State, Since: st.Since, LastError: st.LastError, Restarts: st.Restarts}
}
