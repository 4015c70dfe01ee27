// Package cluster lets several sluice nodes share one PostgreSQL database (issue 17): each node
// registers itself and heartbeats, every active record is owned by one node through a lease
// with an expiry and a generation, a node that stops renewing loses its leases to the others,
// and new or orphaned records are placed on the node with the most free capacity.
//
// The rules, all on the database's clock (now()), so that node clocks do not matter:
//   - A lease is live while its expiry is after now(). Acquire takes a record's lease when it has
//     none, when it expired, when it was released, or when this node id holds it already; each
//     take raises the record's generation by one, in one statement.
//   - Renew extends every lease this node holds, in one statement, only where the row still
//     names this node and the generation it took: a lease taken over (generation changed) or
//     gone is reported lost, and the node must stop that record (fencing).
//   - A node that could not renew for LeaseTTL minus Renew since its last successful renewal
//     reports every lease lost (Run does it), before any other node can take them over.
//   - Release and ReleaseAll hand leases back at once (a clean stop), so others need not wait
//     for the expiry.
//
// The nodes and leases tables are made by the PostgreSQL store's migration 3
// (storage/migrate_postgres.go); open the store before the Node.
package cluster
