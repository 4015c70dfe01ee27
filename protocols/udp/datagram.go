package udp

import (
	"encoding/binary"

	"github.com/sluicemedia/sluice/packager/mpegts"
)

// rtpHeaderSize is the fixed part of an RTP header (RFC 3550 section 5.1).
const rtpHeaderSize = 12

// tsPayload returns the MPEG-TS packets a datagram carries: the datagram itself, or what
// follows its RTP header (RFC 2250, as sent by rtp:// outputs). It returns nil unless that is
// a whole number of packets, each starting with the sync byte: anything else is not a
// transport stream and does not start or extend a session.
func tsPayload(p []byte) []byte {
	if isTS(p) {
		return p
	}
	if len(p) < rtpHeaderSize || p[0]>>6 != 2 {
		return nil
	}
	off := rtpHeaderSize + int(p[0]&0x0f)*4 // CSRC list
	if p[0]&0x10 != 0 {                     // header extension: 4 bytes, then length words
		if len(p) < off+4 {
			return nil
		}
		off += 4 + int(binary.BigEndian.Uint16(p[off+2:]))*4
	}
	end := len(p)
	if p[0]&0x20 != 0 { // padding: the last byte counts it
		end -= int(p[len(p)-1])
	}
	if off > end || !isTS(p[off:end]) {
		return nil
	}
	return p[off:end]
}

// isTS tells whether p is a whole, non-empty number of sync-aligned TS packets.
func isTS(p []byte) bool {
	if len(p) == 0 || len(p)%mpegts.PacketSize != 0 {
		return false
	}
	for i := 0; i < len(p); i += mpegts.PacketSize {
		if p[i] != 0x47 {
			return false
		}
	}
	return true
}
