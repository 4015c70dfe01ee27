package app

import (
	"time"

	"github.com/sluicemedia/sluice/api"
	"github.com/sluicemedia/sluice/protocols/srt"
)

// srtLinks returns what a part reports of its SRT link through probe (nil: no SRT link).
func srtLinks(role string, probe *srt.Probe) func() []api.SRTLink {
	if probe == nil {
		return nil
	}
	return func() []api.SRTLink {
		st, peer, ok := probe.Link()
		if !ok {
			return nil
		}
		return []api.SRTLink{srtLink(role, peer, st)}
	}
}

// srtLink converts an SRT connection's statistics for the API.
func srtLink(role, peer string, st srt.LinkStats) api.SRTLink {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return api.SRTLink{
		Role: role, Peer: peer,
		RTTMs: ms(st.RTT), RTTVarMs: ms(st.RTTVar),
		BandwidthKbps: float64(st.LinkCapacity) / 1000, RecvKbps: float64(st.RecvRate) / 1000, SendKbps: float64(st.SendRate) / 1000,
		LatencyMs: st.Latency.Milliseconds(), PeerLatencyMs: st.PeerLatency.Milliseconds(),
		PacketsSent: st.PktSent, PacketsReceived: st.PktRecv, PacketsLost: st.PktRecvLoss,
		PacketsRetransmitted: st.PktRetrans + st.PktRecvRetrans, PacketsDropped: st.PktSendDrop + st.PktRecvDrop,
		PacketsBelated: st.PktRecvBelated, PacketsUndecrypted: st.PktRecvUndecrypt,
		BytesSent: st.ByteSent, BytesReceived: st.ByteRecv,
		RecvBufferPackets: st.RecvBufPkts, RecvBufferMs: ms(st.RecvBufSpan),
		SendBufferPackets: st.SendBufPkts, SendBufferMs: ms(st.SendBufSpan),
	}
}
