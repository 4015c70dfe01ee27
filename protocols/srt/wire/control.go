package wire

import (
	"encoding/binary"
	"fmt"
)

// ControlType is the 15-bit message type of a control packet.
type ControlType uint16

// Control packet types (draft-sharabayko-srt §3.2).
const (
	CtrlHandshake  ControlType = 0x0000
	CtrlKeepAlive  ControlType = 0x0001
	CtrlACK        ControlType = 0x0002
	CtrlNAK        ControlType = 0x0003 // loss report
	CtrlCongestion ControlType = 0x0004 // congestion warning
	CtrlShutdown   ControlType = 0x0005
	CtrlACKACK     ControlType = 0x0006
	CtrlDropReq    ControlType = 0x0007
	CtrlPeerError  ControlType = 0x0008
	CtrlUser       ControlType = 0x7FFF // user-defined: the subtype says what (SRT's KM refresh)
)

// String names the control type.
func (t ControlType) String() string {
	switch t {
	case CtrlHandshake:
		return "handshake"
	case CtrlKeepAlive:
		return "keepalive"
	case CtrlACK:
		return "ack"
	case CtrlNAK:
		return "nak"
	case CtrlCongestion:
		return "congestion-warning"
	case CtrlShutdown:
		return "shutdown"
	case CtrlACKACK:
		return "ackack"
	case CtrlDropReq:
		return "dropreq"
	case CtrlPeerError:
		return "peer-error"
	case CtrlUser:
		return "user"
	}
	return fmt.Sprintf("control-0x%04x", uint16(t))
}

// Subtypes of CtrlUser and extension types of the handshake (SRT_CMD_*): both share one
// numbering.
const (
	ExtHSReq      uint16 = 1
	ExtHSRsp      uint16 = 2
	ExtKMReq      uint16 = 3
	ExtKMRsp      uint16 = 4
	ExtSID        uint16 = 5
	ExtCongestion uint16 = 6
	ExtFilter     uint16 = 7
	ExtGroup      uint16 = 8
)

// Control is a parsed control packet: the header and the control information field. CIF
// aliases the datagram it was parsed from.
type Control struct {
	Type       ControlType
	Subtype    uint16 // extended type, for CtrlUser
	Info       uint32 // type-specific information (word 1): ACK number, message number, error code
	Timestamp  uint32
	DestSocket uint32
	CIF        []byte
}

var errControlData = fmt.Errorf("%w: data packet where a control packet is expected", ErrInvalid)

// ParseControl parses the control packet b into c. c.CIF aliases b.
func ParseControl(b []byte, c *Control) error {
	if len(b) < HeaderSize {
		return errShortHeader
	}
	if b[0]&0x80 == 0 {
		return errControlData
	}
	c.Type = ControlType(binary.BigEndian.Uint16(b[0:2]) & 0x7FFF)
	c.Subtype = binary.BigEndian.Uint16(b[2:4])
	c.Info = binary.BigEndian.Uint32(b[4:8])
	c.Timestamp = binary.BigEndian.Uint32(b[8:12])
	c.DestSocket = binary.BigEndian.Uint32(b[12:16])
	c.CIF = b[HeaderSize:]
	return nil
}

// PutControlHeader writes c's header into the first 16 bytes of b, which must have room.
func PutControlHeader(b []byte, c *Control) {
	_ = b[HeaderSize-1]
	binary.BigEndian.PutUint16(b[0:2], 0x8000|uint16(c.Type&0x7FFF))
	binary.BigEndian.PutUint16(b[2:4], c.Subtype)
	binary.BigEndian.PutUint32(b[4:8], c.Info)
	binary.BigEndian.PutUint32(b[8:12], c.Timestamp)
	binary.BigEndian.PutUint32(b[12:16], c.DestSocket)
}

// AppendControl appends the control packet c (header and CIF) to b.
func AppendControl(b []byte, c *Control) []byte {
	n := len(b)
	b = append(b, make([]byte, HeaderSize)...)
	PutControlHeader(b[n:], c)
	return append(b, c.CIF...)
}

// AppendControlHeader appends only c's header to b; the caller appends the CIF after it
// (c.CIF is ignored).
func AppendControlHeader(b []byte, c *Control) []byte {
	n := len(b)
	b = append(b, make([]byte, HeaderSize)...)
	PutControlHeader(b[n:], c)
	return b
}

// The zero-filled 32-bit CIF libsrt puts in control packets that carry none (keep-alive,
// shutdown, ACKACK): receivers must accept it and an empty CIF alike.
var emptyCIF = [4]byte{}

// AppendEmptyCIF appends libsrt's 4-byte zero CIF of the control types that carry nothing.
func AppendEmptyCIF(b []byte) []byte { return append(b, emptyCIF[:]...) }
