package app

import (
	"log/slog"
	"net"

	"github.com/sluicemedia/sluice/internal/connlimit"
)

// Connection caps of the HTTP ports (internal/connlimit): a connection past a cap is admitted
// in place of the connection idle the longest (httpserve.New's ConnState tells the idle ones),
// or closed at once when none is idle. The total caps are lowered to a share of the process's open-file limit when that is
// smaller, so that no port can use up the descriptors the processes and the store need.
const (
	// apiMaxConns caps the connections open at once on the API port (1024 connections, at most
	// half the open-file limit).
	apiMaxConns = 1024
	// apiMaxPerAddr caps one client address's connections to the API port (128 connections): a
	// browser opens at most 6 per host, hls.js on the main port one or two per viewer, a
	// script tens at most; 128 leaves room for an office behind one NAT, and two addresses at
	// their cap still leave room for others at an open-file limit of 1024.
	apiMaxPerAddr = 128
	// apiFileShare: the API port may hold at most 1/2 of the open-file limit.
	apiFileShare = 2
	// playerMaxConns caps the connections open at once on one player's port (1024 connections,
	// at most a quarter of the open-file limit).
	playerMaxConns = 1024
	// playerMaxPerAddr caps one client address's connections to a player's port (128
	// connections): a viewer needs one or two; a NAT or a caching proxy in front, dozens.
	playerMaxPerAddr = 128
	// playerFileShare: one player's port may hold at most 1/4 of the open-file limit.
	playerFileShare = 4
	// metricsMaxConns caps the connections open at once on the --metrics-addr port (64
	// connections): a few Prometheus servers scrape it, each over one kept-alive connection.
	metricsMaxConns = 64
	// metricsMaxPerAddr caps one client address's connections to the metrics port (8).
	metricsMaxPerAddr = 8
	// metricsFileShare: the metrics port may hold at most 1/16 of the open-file limit.
	metricsFileShare = 16
)

// capConns lowers a total cap to 1/share of the open-file limit (at least 1).
func capConns(n, share int) int { return capConnsTo(n, openFileLimit(), share) }

// capConnsTo lowers n to 1/share of files (at least 1); files 0 is unknown: n stays.
func capConnsTo(n int, files uint64, share int) int {
	if lim := files / uint64(share); files > 0 && uint64(n) > lim {
		return max(int(lim), 1)
	}
	return n
}

// guardAPI caps the API port's connections.
func guardAPI(ln net.Listener, log *slog.Logger) *connlimit.Listener {
	return connlimit.Wrap(ln, connlimit.Limits{MaxConns: capConns(apiMaxConns, apiFileShare), MaxPerAddr: apiMaxPerAddr, EvictIdle: true}, log.With("listener", "api"))
}

// guardMetrics caps the --metrics-addr port's connections.
func guardMetrics(ln net.Listener, log *slog.Logger) *connlimit.Listener {
	return connlimit.Wrap(ln, connlimit.Limits{MaxConns: capConns(metricsMaxConns, metricsFileShare), MaxPerAddr: metricsMaxPerAddr, EvictIdle: true}, log.With("listener", "metrics"))
}

// guardPlayer caps a player port's connections.
func guardPlayer(ln net.Listener, log *slog.Logger) *connlimit.Listener {
	return connlimit.Wrap(ln, connlimit.Limits{MaxConns: capConns(playerMaxConns, playerFileShare), MaxPerAddr: playerMaxPerAddr, EvictIdle: true}, log.With("listener", "player"))
}
