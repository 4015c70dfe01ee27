package link

import (
	"net/netip"

	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// srtVersion is the SRT version we announce in HSREQ/HSRSP: libsrt 1.5.1, whose live-mode
// behaviour this package follows.
const srtVersion = 0x010501

// srtFlags are the SRT flags we announce: TSBPD both ways, too-late packet drop, periodic NAK
// reports, and the legacy KK and R bits.
const srtFlags = wire.FlagTSBPDSnd | wire.FlagTSBPDRcv | wire.FlagCrypt | wire.FlagTLPktDrop |
	wire.FlagNAKReport | wire.FlagRexmitFlag

// handshakeResend is how often a caller repeats its induction or conclusion until answered.
const handshakeResend = 250_000 // µs

// mss is the maximum segment size we announce (SRTO_MSS).
const mss = 1500

// appendHandshakePacket appends a handshake control packet for dest.
func appendHandshakePacket(b []byte, dest, ts uint32, hs *wire.Handshake) []byte {
	b = wire.AppendControlHeader(b, &wire.Control{Type: wire.CtrlHandshake, Timestamp: ts, DestSocket: dest})
	return wire.AppendHandshake(b, hs)
}

// latencyMS converts a latency in microseconds to the handshake's 16-bit milliseconds.
func latencyMS(us int64) uint16 { return uint16(min(us/1000, 0xFFFF)) }

// peerAddr returns the address a handshake's peer address field should carry.
func peerAddr(a netip.AddrPort) netip.Addr { return a.Addr() }
