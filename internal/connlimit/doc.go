// Package connlimit caps the connections a TCP listener keeps open, in total and per client
// address. A connection past a cap is accepted and closed at once (never left queued in the
// kernel's backlog, where it would still hold a slot of the accept queue), counted by cause, and
// logged at most once a second. A connection frees its slot when it is closed, exactly once.
//
// A server that tells which of its connections are idle (Conn.Idle, Conn.Busy: an HTTP server
// from its ConnState hook) may ask for Limits.EvictIdle: a connection past a cap is then
// admitted in place of the connection idle the longest, so idle connections cannot lock new
// clients out; busy ones are never closed for another.
//
// A client address is the peer's IP; IPv4-mapped IPv6 addresses count as their IPv4 address, and
// IPv6 peers are grouped by their /64 prefix, since one host or subscriber routinely owns a whole
// /64 and could otherwise take a fresh address per connection. Peers that have no IP (Unix
// sockets) count only against the total cap.
//
// The package uses the standard library only, so every server (API, players, media listeners)
// can wrap its listener with it.
package connlimit
