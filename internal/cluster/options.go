package cluster

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode"

	"github.com/sluicemedia/sluice/internal/opt"
)

// Defaults of Options.
const (
	// DefaultRenew is how often a node heartbeats and renews its leases.
	DefaultRenew = 3 * time.Second
	// DefaultLeaseTTL is how long a lease lives without a renewal, and how long a node counts as
	// live after its last heartbeat.
	DefaultLeaseTTL = 10 * time.Second
	// maxIDLen and maxURLLen bound what a node writes about itself.
	maxIDLen  = 100
	maxURLLen = 2000
)

// Options configure a Node. The zero value works: a random id, no URLs, no capacity.
type Options struct {
	// ID names the node in the cluster; it must be unique among running nodes. A node restarted
	// with the same id takes its earlier leases back at once. Default: the host name and a
	// random suffix (a new id each start; KeptID keeps one in a folder). At most 100 bytes.
	ID string
	// APIURL is where the other nodes reach this node's API (e.g. http://10.0.0.2:8080).
	// Default: empty. At most 2000 bytes.
	APIURL string
	// PublicURL is where viewers reach this node's playback (redirects to the owner go there).
	// Default: empty. At most 2000 bytes.
	PublicURL string
	// Capacity is read at every heartbeat and written to the node's row for placement. Default
	// (nil): zero capacity, so placement goes by leases held alone.
	Capacity func() Capacity
	// Renew is how often Run heartbeats and renews the leases. Default 3 s.
	Renew time.Duration
	// LeaseTTL is how long a lease lives after its last renewal, and how long a node counts as
	// live after its last heartbeat; it must be at least twice Renew. The same on every node.
	// Default 10 s.
	LeaseTTL time.Duration
	// Lost gets the records whose leases this node lost (taken over, removed, or not renewed in
	// time), from Run's goroutine; the node must stop them. Default (nil): Run only logs them.
	Lost func(records []string)
	// Log gets the node's messages (narrowed with the node id). Default: slog.Default().
	Log *slog.Logger
}

// withDefaults returns o with its defaults filled in, or an error naming the bad setting.
func (o Options) withDefaults() (Options, error) {
	if o.ID == "" {
		o.ID = newID()
	}
	opt.Zero(&o.Renew, DefaultRenew)
	opt.Zero(&o.LeaseTTL, DefaultLeaseTTL)
	opt.Zero(&o.Log, slog.Default())
	var errs []error
	if len(o.ID) > maxIDLen {
		errs = append(errs, fmt.Errorf("id %.20q…: %d bytes, at most %d", o.ID, len(o.ID), maxIDLen))
	}
	// A notification names its node as a word among others (start <module> <id> <node>).
	if strings.ContainsFunc(o.ID, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) {
		errs = append(errs, fmt.Errorf("id %q: white space or a control character", o.ID))
	}
	if len(o.APIURL) > maxURLLen || len(o.PublicURL) > maxURLLen {
		errs = append(errs, fmt.Errorf("api or public URL longer than %d bytes", maxURLLen))
	}
	if o.Renew < 0 {
		errs = append(errs, fmt.Errorf("renew %v is negative", o.Renew))
	}
	if o.LeaseTTL < 2*o.Renew {
		errs = append(errs, fmt.Errorf("lease TTL %v is shorter than twice the renewal interval %v", o.LeaseTTL, o.Renew))
	}
	if err := errors.Join(errs...); err != nil {
		return o, fmt.Errorf("cluster node options: %w", err)
	}
	return o, nil
}
