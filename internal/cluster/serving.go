package cluster

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Serving is the node that runs a record, as a viewer or a client reaches it.
type Serving struct {
	// Node is its id.
	Node string
	// PublicURL is where viewers reach its playback (--public-url), or its API URL when it has
	// none; empty when it registered neither.
	PublicURL string
}

// ServingNode is the live lease holder of record with its URL; ok is false when no node holds
// a live lease on it.
func (n *Node) ServingNode(ctx context.Context, record string) (s Serving, ok bool, err error) {
	err = n.db.QueryRowContext(ctx, `
SELECT l.node_id, COALESCE(NULLIF(nd.public_url, ''), nd.api_url) FROM leases AS l JOIN nodes AS nd ON nd.id = l.node_id
WHERE l.record_id = $1 AND l.expires > now()`, record).Scan(&s.Node, &s.PublicURL)
	if errors.Is(err, sql.ErrNoRows) {
		return Serving{}, false, nil
	}
	if err != nil {
		return Serving{}, false, fmt.Errorf("cluster: read the node serving record %q: %w", record, err)
	}
	return s, true, nil
}
