package mpegts

import "fmt"

// packet is one parsed transport stream packet; payload aliases the input.
type packet struct {
	pid           uint16
	pusi          bool // payload_unit_start_indicator: a PES or section starts here
	cc            uint8
	hasPayload    bool
	discontinuity bool // adaptation field discontinuity_indicator
	payload       []byte
}

// parsePacket parses a 188-byte packet that starts with the sync byte.
func parsePacket(b []byte) (packet, error) {
	var p packet
	if len(b) != PacketSize || b[0] != syncByte {
		return p, fmt.Errorf("mpegts: packet of %d bytes without sync byte", len(b))
	}
	if b[1]&0x80 != 0 {
		return p, fmt.Errorf("mpegts: packet with transport_error_indicator")
	}
	p.pid = uint16(b[1]&0x1f)<<8 | uint16(b[2])
	p.pusi = b[1]&0x40 != 0
	if b[3]&0xc0 != 0 {
		return p, fmt.Errorf("mpegts: scrambled packet on PID %d", p.pid)
	}
	afc := b[3] >> 4 & 0x03
	p.cc = b[3] & 0x0f
	if afc == 0 {
		return p, fmt.Errorf("mpegts: reserved adaptation_field_control on PID %d", p.pid)
	}
	off := 4
	if afc&0x02 != 0 {
		n := int(b[4])
		off = 5 + n
		if off > PacketSize {
			return p, fmt.Errorf("mpegts: adaptation field of %d bytes on PID %d overruns the packet", n, p.pid)
		}
		if n > 0 {
			p.discontinuity = b[5]&0x80 != 0
		}
	}
	if afc&0x01 != 0 {
		p.hasPayload = true
		p.payload = b[off:]
	}
	return p, nil
}
