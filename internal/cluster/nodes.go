package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// NodeInfo is one node as /api/nodes/getAll shows it. Times are the database's.
type NodeInfo struct {
	ID        string    `json:"id"`
	APIURL    string    `json:"api_url"`
	PublicURL string    `json:"public_url"`
	Started   time.Time `json:"started"`
	Heartbeat time.Time `json:"heartbeat"`
	// Live is whether the last heartbeat is within LeaseTTL (of the node asking).
	Live     bool `json:"live"`
	Draining bool `json:"draining"`
	// Leases is how many live leases the node holds.
	Leases   int      `json:"leases"`
	Capacity Capacity `json:"capacity"`
}

// Nodes lists every registered node, by id.
func (n *Node) Nodes(ctx context.Context) ([]NodeInfo, error) {
	rows, err := n.db.QueryContext(ctx, `
SELECT n.id, n.api_url, n.public_url, n.started, n.heartbeat,
	n.heartbeat > now() - $1::float8 * interval '1 millisecond', n.draining,
	(SELECT COUNT(*) FROM leases AS l WHERE l.node_id = n.id AND l.expires > now()), n.capacity::text
FROM nodes AS n ORDER BY n.id`, ms(n.opts.LeaseTTL))
	if err != nil {
		return nil, fmt.Errorf("cluster: list nodes: %w", err)
	}
	defer rows.Close()
	var out []NodeInfo
	for rows.Next() {
		var ni NodeInfo
		var capa string
		if err := rows.Scan(&ni.ID, &ni.APIURL, &ni.PublicURL, &ni.Started, &ni.Heartbeat,
			&ni.Live, &ni.Draining, &ni.Leases, &capa); err != nil {
			return nil, fmt.Errorf("cluster: list nodes: %w", err)
		}
		if err := json.Unmarshal([]byte(capa), &ni.Capacity); err != nil {
			// A row another version wrote: shown and placed as zero capacity.
			n.log.Warn("cluster: unreadable capacity of a node", "other_node", ni.ID, "error", err)
			ni.Capacity = Capacity{}
		}
		out = append(out, ni)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("cluster: list nodes: %w", err)
	}
	return out, nil
}

// LeaseTTL is how long a lease lives without a renewal, and how long a node counts as live
// after its last heartbeat (Options.LeaseTTL).
func (n *Node) LeaseTTL() time.Duration { return n.opts.LeaseTTL }

// Drain marks node id as draining: placement gives it nothing new, and the node, at its next
// heartbeat, hands back its records (stops them and releases their leases) so that they move.
// It stays draining until it registers again (a restart) or Resume.
func (n *Node) Drain(ctx context.Context, id string) error {
	return n.setDraining(ctx, id, true)
}

// Resume ends node id's draining: it takes new records again.
func (n *Node) Resume(ctx context.Context, id string) error {
	return n.setDraining(ctx, id, false)
}

// setDraining writes node id's draining flag.
func (n *Node) setDraining(ctx context.Context, id string, draining bool) error {
	res, err := n.db.ExecContext(ctx, `UPDATE nodes SET draining = $2 WHERE id = $1`, id, draining)
	if err != nil {
		return fmt.Errorf("cluster: set node %q draining %v: %w", id, draining, err)
	}
	if k, err := res.RowsAffected(); err != nil || k == 0 {
		return fmt.Errorf("cluster: set node %q draining %v: %w", id, draining, ErrUnknownNode)
	}
	return nil
}
