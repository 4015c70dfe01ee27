package app

import (
	"log/slog"
	"net"

	"github.com/sluicemedia/sluice/internal/connlimit"
)

// Connection caps of the HTTP ports (internal/connlimit): a connection past a cap is closed at
// once. The total caps are lowered to a quarter of the process's open-file limit when that is
// smaller, so that no port can use up the descriptors the processes need.
const (
	// apiMaxConns caps the connections open at once on the API port (512 connections).
	apiMaxConns = 512
	// apiMaxPerAddr caps one client address's connections to the API port (64 connections): a
	// browser opens at most 6 per host, hls.js on the main port one or two per viewer, a
	// script a few; 64 leaves room for an office behind one NAT.
	apiMaxPerAddr = 64
	// playerMaxConns caps the connections open at once on one player's port (1024 connections).
	playerMaxConns = 1024
	// playerMaxPerAddr caps one client address's connections to a player's port (128
	// connections): a viewer needs one or two; a NAT or a caching proxy in front, dozens.
	playerMaxPerAddr = 128
)

// capConns lowers a total cap to a quarter of the open-file limit (at least 1).
func capConns(n int) int { return capConnsTo(n, openFileLimit()) }

// capConnsTo lowers n to a quarter of files (at least 1); files 0 is unknown: n stays.
func capConnsTo(n int, files uint64) int {
	if files > 0 && uint64(n) > files/4 {
		return max(int(files/4), 1)
	}
	return n
}

// guardAPI caps the API port's connections.
func guardAPI(ln net.Listener, log *slog.Logger) *connlimit.Listener {
	return connlimit.Wrap(ln, connlimit.Limits{MaxConns: capConns(apiMaxConns), MaxPerAddr: apiMaxPerAddr}, log.With("listener", "api"))
}

// guardPlayer caps a player port's connections.
func guardPlayer(ln net.Listener, log *slog.Logger) *connlimit.Listener {
	return connlimit.Wrap(ln, connlimit.Limits{MaxConns: capConns(playerMaxConns), MaxPerAddr: playerMaxPerAddr}, log.With("listener", "player"))
}
