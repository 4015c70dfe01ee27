// Package udp carries MPEG-TS over UDP: inputs that receive datagrams on a port or from a
// multicast group (Listen, Pull) and publish them into a Stream, and outputs that send a
// Stream as paced datagrams, bare (Send) or in RTP (SendRTP).
//
// An input publishes in sessions: the first datagram of whole sync-aligned TS packets (bare or
// behind an RTP header) starts one, and Options.IdleTimeout without such a datagram ends it;
// each new session is a discontinuity for readers. What is published is normalised: DTS
// monotonic per track (small steps back repaired; a jump of more than 1 s back or 10 s forward
// starts a new session), the first video unit of a session a key frame.
package udp
