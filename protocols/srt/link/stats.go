package link

import "time"

// Stats is a snapshot of a connection's counters (libsrt's statistics.md names in brackets).
// Counters count since the connection started; rates cover the last second.
type Stats struct {
	RTT    time.Duration // smoothed round-trip time [msRTT]
	RTTVar time.Duration // round-trip time variance

	LinkCapacity int64 // estimated link capacity, bits per second [mbpsBandwidth]
	RecvRate     int64 // received payload, bits per second [mbpsRecvRate]
	SendRate     int64 // sent payload, bits per second [mbpsSendRate]
	MaxBW        int64 // current pacing rate, bytes per second of payload and headers (0: unlimited)

	Latency     time.Duration // negotiated receive latency [msRcvTsbPdDelay]
	PeerLatency time.Duration // negotiated latency of what we send [msSndTsbPdDelay]

	PktSent      uint64 // data packets sent, retransmissions included [pktSent]
	ByteSent     uint64 // payload bytes sent, retransmissions included [byteSent]
	PktSentUniq  uint64 // data packets sent once [pktSentUnique]
	PktRetrans   uint64 // data packets sent again [pktRetrans]
	ByteRetrans  uint64 // payload bytes sent again [byteRetrans]
	PktSendLoss  uint64 // packets the peer reported lost [pktSndLoss]
	PktSendDrop  uint64 // packets given up before acknowledgement, too late or no room [pktSndDrop]
	ByteSendDrop uint64 // payload bytes of those [byteSndDrop]

	PktRecv          uint64 // data packets received, duplicates included [pktRecv]
	ByteRecv         uint64 // payload bytes received [byteRecv]
	PktRecvUniq      uint64 // data packets received once [pktRecvUnique]
	PktRecvRetrans   uint64 // retransmitted packets received [pktRcvRetrans]
	PktRecvLoss      uint64 // gaps detected in the sequence [pktRcvLoss]
	PktRecvDrop      uint64 // packets given up: too late, no room, or asked by the peer [pktRcvDrop]
	PktRecvBelated   uint64 // packets that came after their slot was given up or delivered [pktRcvBelated]
	PktRecvDup       uint64 // packets received twice [pktRcvDup? counted by libsrt as pktRcvFilter*]
	PktRecvUndecrypt uint64 // packets that could not be decrypted [pktRcvUndecrypt]
	PktRecvOverflow  uint64 // packets refused because the receive buffer was full (in PktRecvDrop too)

	RecvBufPkts  int           // packets held for Read [pktRcvBuf]
	RecvBufBytes int           // payload bytes held for Read [byteRcvBuf]
	RecvBufSpan  time.Duration // time span of the packets held [msRcvBuf]
	SendBufPkts  int           // packets not yet acknowledged [pktSndBuf]
	SendBufBytes int           // payload bytes of those [byteSndBuf]
	SendBufSpan  time.Duration // age of the oldest of those [msSndBuf]
	FlowWindow   int           // free receive buffer the peer last reported, packets [pktFlowWindow]
}

// counters are the cumulative numbers of a connection, under its lock.
type counters struct {
	pktSent, byteSent, pktSentUniq, pktRetrans, byteRetrans, pktSendLoss, pktSendDrop, byteSendDrop uint64

	pktRecv, byteRecv, pktRecvUniq, pktRecvRetrans, pktRecvLoss, pktRecvDrop, pktRecvBelated, pktRecvDup uint64
	pktRecvUndecrypt, pktRecvOverflow                                                                    uint64
}
