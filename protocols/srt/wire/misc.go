package wire

import (
	"encoding/binary"
	"fmt"
)

// DropReq is the CIF of a drop request: the sender gives up the packets First..Last
// (inclusive). The message number is the control header's Info field (0 when unknown).
type DropReq struct {
	First, Last uint32
}

// DropReqLen is the CIF length of a drop request.
const DropReqLen = 8

var (
	errDropShort = fmt.Errorf("%w: drop request CIF shorter than 8 bytes", ErrTruncated)
	errDropSeq   = fmt.Errorf("%w: drop request sequence number has its top bit set", ErrInvalid)
	errDropOrder = fmt.Errorf("%w: drop request range ends before it starts", ErrInvalid)
)

// ParseDropReq parses a drop request CIF into d.
func ParseDropReq(cif []byte, d *DropReq) error {
	if len(cif) < DropReqLen {
		return errDropShort
	}
	d.First = binary.BigEndian.Uint32(cif[0:4])
	d.Last = binary.BigEndian.Uint32(cif[4:8])
	if (d.First|d.Last)&^SeqMask != 0 {
		return errDropSeq
	}
	if SeqLess(d.Last, d.First) {
		return errDropOrder
	}
	return nil
}

// AppendDropReq appends the CIF of d.
func AppendDropReq(b []byte, d *DropReq) []byte {
	b = binary.BigEndian.AppendUint32(b, d.First&SeqMask)
	return binary.BigEndian.AppendUint32(b, d.Last&SeqMask)
}
