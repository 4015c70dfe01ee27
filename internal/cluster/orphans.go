package cluster

import (
	"context"
	"fmt"
)

// Orphan is an active record that no node holds a live lease on.
type Orphan struct {
	// ID and Module name the record (storage's id and module).
	ID     string
	Module string
}

// Orphans lists the active records with no live lease (none yet, released, or expired after
// LeaseTTL without a renewal), oldest first: the ones to place.
func (n *Node) Orphans(ctx context.Context) ([]Orphan, error) {
	rows, err := n.db.QueryContext(ctx, `
SELECT r.id, r.module FROM records AS r
WHERE r.active <> 0 AND NOT EXISTS (
	SELECT 1 FROM leases AS l WHERE l.record_id = r.id AND l.node_id IS NOT NULL AND l.expires > now())
ORDER BY r.created, r.id`)
	if err != nil {
		return nil, fmt.Errorf("cluster: list orphans: %w", err)
	}
	defer rows.Close()
	var out []Orphan
	for rows.Next() {
		var o Orphan
		if err := rows.Scan(&o.ID, &o.Module); err != nil {
			return nil, fmt.Errorf("cluster: list orphans: %w", err)
		}
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("cluster: list orphans: %w", err)
	}
	return out, nil
}
