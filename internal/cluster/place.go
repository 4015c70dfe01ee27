package cluster

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Place picks the node that should run record: the holder of its live lease when it has one
// (a record stays where it runs); else, when affinity names a record (the server module whose
// stream record reads), the node holding affinity's live lease, unless that node is draining;
// else the live node, not draining and not full, with the most free capacity (Capacity.free:
// the smaller of the free CPU share and the free share of ffmpeg children, live leases counting
// as children), ties going to fewer leases, then to the lower id. It returns ErrNoNode when no
// node qualifies. Place only answers: the node picked takes the lease (Acquire).
func (n *Node) Place(ctx context.Context, record, affinity string) (string, error) {
	nodes, err := n.Nodes(ctx)
	if err != nil {
		return "", fmt.Errorf("place record %q: %w", record, err)
	}
	byID := make(map[string]NodeInfo, len(nodes))
	for _, ni := range nodes {
		byID[ni.ID] = ni
	}
	if h, ok, err := n.liveHolder(ctx, record); err != nil {
		return "", fmt.Errorf("place record %q: %w", record, err)
	} else if ok {
		return h, nil
	}
	if affinity != "" {
		h, ok, err := n.liveHolder(ctx, affinity)
		if err != nil {
			return "", fmt.Errorf("place record %q: %w", record, err)
		}
		if ni := byID[h]; ok && ni.Live && !ni.Draining {
			return h, nil
		}
	}
	best, bestFree := -1, 0.0
	for i, ni := range nodes {
		if !ni.Live || ni.Draining || ni.Capacity.full(ni.Leases) {
			continue
		}
		f := ni.Capacity.free(ni.Leases)
		if best < 0 || f > bestFree || (f == bestFree && ni.Leases < nodes[best].Leases) {
			best, bestFree = i, f
		}
	}
	if best < 0 {
		return "", fmt.Errorf("place record %q among %d nodes: %w", record, len(nodes), ErrNoNode)
	}
	return nodes[best].ID, nil
}

// liveHolder is the node holding record's live lease, if any.
func (n *Node) liveHolder(ctx context.Context, record string) (string, bool, error) {
	var node string
	err := n.db.QueryRowContext(ctx, `
SELECT node_id FROM leases WHERE record_id = $1 AND node_id IS NOT NULL AND expires > now()`, record).Scan(&node)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read the lease of record %q: %w", record, err)
	}
	return node, true, nil
}
