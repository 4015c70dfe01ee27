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

// NodeURLs are where a node is reached.
type NodeURLs struct {
	// API is its API URL (--cluster-api-url), or its public URL when it has none.
	API string
	// Public is its playback URL (--cluster-public-url, --public-url), or its API URL when it
	// has none.
	Public string
	// Live is whether its last heartbeat is within the lease TTL.
	Live bool
}

// NodeURL is where node id is reached; ok is false when no such node is registered.
func (n *Node) NodeURL(ctx context.Context, id string) (u NodeURLs, ok bool, err error) {
	err = n.db.QueryRowContext(ctx, `
SELECT COALESCE(NULLIF(api_url, ''), public_url), COALESCE(NULLIF(public_url, ''), api_url),
	heartbeat > now() - $2::float8 * interval '1 millisecond'
FROM nodes WHERE id = $1`, id, ms(n.opts.LeaseTTL)).Scan(&u.API, &u.Public, &u.Live)
	if errors.Is(err, sql.ErrNoRows) {
		return NodeURLs{}, false, nil
	}
	if err != nil {
		return NodeURLs{}, false, fmt.Errorf("cluster: read the URLs of node %q: %w", id, err)
	}
	return u, true, nil
}
