package api

// SRTLink is the live link statistics of one SRT connection: a server module's publisher
// (getActiveStreams), or a process's SRT input or output (getStat and the records' state).
type SRTLink struct {
	// Role is "input" or "output" for a process, "publisher" for a server module's stream.
	Role string
	// Peer is the remote "ip:port".
	Peer string
	// RTTMs and RTTVarMs are the smoothed round-trip time and its variance, milliseconds.
	RTTMs, RTTVarMs float64
	// BandwidthKbps is the estimated link capacity; RecvKbps and SendKbps the payload rates over
	// the last second; kbit/s.
	BandwidthKbps, RecvKbps, SendKbps float64
	// LatencyMs and PeerLatencyMs are the negotiated TSBPD latencies of what we receive and of
	// what we send, milliseconds.
	LatencyMs, PeerLatencyMs int64
	// Data packets and payload bytes since the connection started: sent and received
	// (retransmissions included), found lost on receipt, retransmitted (sent or received),
	// dropped as too late or for lack of room (send and receive), belated (came after their
	// slot was given up), undecryptable.
	PacketsSent, PacketsReceived, PacketsLost, PacketsRetransmitted, PacketsDropped uint64
	PacketsBelated, PacketsUndecrypted, BytesSent, BytesReceived                    uint64
	// RecvBufferPackets/RecvBufferMs and SendBufferPackets/SendBufferMs are what the receive
	// buffer holds for delivery and what the send buffer holds unacknowledged, now.
	RecvBufferPackets, SendBufferPackets int
	RecvBufferMs, SendBufferMs           float64
}

// doc renders l for the API (snake_case keys, see the SRTLink schema).
func (l SRTLink) doc() map[string]any {
	return map[string]any{
		"role": l.Role, "peer": l.Peer, "rtt_ms": l.RTTMs, "rtt_var_ms": l.RTTVarMs,
		"bandwidth_kbps": l.BandwidthKbps, "recv_kbps": l.RecvKbps, "send_kbps": l.SendKbps,
		"latency_ms": l.LatencyMs, "peer_latency_ms": l.PeerLatencyMs,
		"packets_sent": l.PacketsSent, "packets_received": l.PacketsReceived, "packets_lost": l.PacketsLost,
		"packets_retransmitted": l.PacketsRetransmitted, "packets_dropped": l.PacketsDropped,
		"packets_belated": l.PacketsBelated, "packets_undecrypted": l.PacketsUndecrypted,
		"bytes_sent": l.BytesSent, "bytes_received": l.BytesReceived,
		"recv_buffer_packets": l.RecvBufferPackets, "recv_buffer_ms": l.RecvBufferMs,
		"send_buffer_packets": l.SendBufferPackets, "send_buffer_ms": l.SendBufferMs,
	}
}

// srtDocs renders a list of links.
func srtDocs(links []SRTLink) []map[string]any {
	out := make([]map[string]any, len(links))
	for i, l := range links {
		out[i] = l.doc()
	}
	return out
}

// srtLinkSchema is the OpenAPI schema of SRTLink.
func srtLinkSchema() map[string]any {
	count := func(what string) map[string]any {
		return map[string]any{"type": "integer", "minimum": 0, "description": what}
	}
	num := func(what string) map[string]any {
		return map[string]any{"type": "number", "minimum": 0, "description": what}
	}
	return jsObject(nil, map[string]any{
		"role": jsEnum("input", "output", "publisher"), "peer": jsString(0, 64),
		"rtt_ms": num("smoothed round-trip time, ms"), "rtt_var_ms": num("round-trip time variance, ms"),
		"bandwidth_kbps": num("estimated link capacity, kbit/s"), "recv_kbps": num("payload received over the last second, kbit/s"),
		"send_kbps":  num("payload sent over the last second, kbit/s"),
		"latency_ms": count("negotiated latency of what is received (TSBPD), ms"), "peer_latency_ms": count("negotiated latency of what is sent, ms"),
		"packets_sent": count("data packets sent, retransmissions included"), "packets_received": count("data packets received, retransmissions included"),
		"packets_lost":          count("data packets found missing on receipt (recovered or not)"),
		"packets_retransmitted": count("data packets sent again (output) or received again (input)"),
		"packets_dropped":       count("data packets given up: too late or no room, send and receive"),
		"packets_belated":       count("data packets that came after their slot was given up or delivered"),
		"packets_undecrypted":   count("data packets that could not be decrypted"),
		"bytes_sent":            count("payload bytes sent"), "bytes_received": count("payload bytes received"),
		"recv_buffer_packets": count("packets held for delivery now"), "recv_buffer_ms": num("time span held for delivery now, ms"),
		"send_buffer_packets": count("packets sent and not yet acknowledged now"), "send_buffer_ms": num("age of the oldest of those, ms"),
	})
}
