package wire

import (
	"encoding/binary"
	"fmt"
)

// ACKKind is the form of an ACK packet, told apart by its CIF length.
type ACKKind uint8

// ACK forms: a light ACK carries only the acknowledged sequence number (libsrt sends one
// every 64 packets between full ACKs), a small ACK adds RTT, RTT variance and the available
// buffer, a full ACK adds the receive rates and link capacity.
const (
	ACKLight ACKKind = iota + 1
	ACKSmall
	ACKFull
)

// CIF lengths of the ACK forms.
const (
	ACKLightLen = 4
	ACKSmallLen = 16
	ACKFullLen  = 28
)

// ACK is the CIF of an ACK packet. The ACK number is the control header's Info field (zero
// in a light ACK).
type ACK struct {
	Kind         ACKKind
	LastACKSeq   uint32 // every packet before this sequence number was received (or dropped)
	RTT          uint32 // microseconds
	RTTVar       uint32 // microseconds
	AvailBuf     uint32 // free receive buffer, packets
	PktRecvRate  uint32 // packets per second
	LinkCapacity uint32 // packets per second
	RecvRate     uint32 // bytes per second
}

var (
	errACKShort = fmt.Errorf("%w: ACK CIF shorter than 4 bytes", ErrTruncated)
	errACKSeq   = fmt.Errorf("%w: ACK sequence number has its top bit set", ErrInvalid)
)

// ParseACK parses an ACK CIF into a. A CIF of 4 to 15 bytes is a light ACK, 16 to 27 a small
// one, 28 or more a full one; bytes past the known fields are ignored.
func ParseACK(cif []byte, a *ACK) error {
	*a = ACK{}
	switch {
	case len(cif) < ACKLightLen:
		return errACKShort
	case len(cif) < ACKSmallLen:
		a.Kind = ACKLight
	case len(cif) < ACKFullLen:
		a.Kind = ACKSmall
	default:
		a.Kind = ACKFull
	}
	a.LastACKSeq = binary.BigEndian.Uint32(cif[0:4])
	if a.LastACKSeq&^SeqMask != 0 {
		return errACKSeq
	}
	if a.Kind >= ACKSmall {
		a.RTT = binary.BigEndian.Uint32(cif[4:8])
		a.RTTVar = binary.BigEndian.Uint32(cif[8:12])
		a.AvailBuf = binary.BigEndian.Uint32(cif[12:16])
	}
	if a.Kind == ACKFull {
		a.PktRecvRate = binary.BigEndian.Uint32(cif[16:20])
		a.LinkCapacity = binary.BigEndian.Uint32(cif[20:24])
		a.RecvRate = binary.BigEndian.Uint32(cif[24:28])
	}
	return nil
}

// AppendACK appends the CIF of a in its Kind's length.
func AppendACK(b []byte, a *ACK) []byte {
	b = binary.BigEndian.AppendUint32(b, a.LastACKSeq&SeqMask)
	if a.Kind == ACKLight {
		return b
	}
	b = binary.BigEndian.AppendUint32(b, a.RTT)
	b = binary.BigEndian.AppendUint32(b, a.RTTVar)
	b = binary.BigEndian.AppendUint32(b, a.AvailBuf)
	if a.Kind == ACKSmall {
		return b
	}
	b = binary.BigEndian.AppendUint32(b, a.PktRecvRate)
	b = binary.BigEndian.AppendUint32(b, a.LinkCapacity)
	return binary.BigEndian.AppendUint32(b, a.RecvRate)
}
