package wire

import (
	"encoding/binary"
	"fmt"
)

// Sizes of SRT packets.
const (
	// HeaderSize is the SRT header of every packet: four 32-bit words.
	HeaderSize = 16
	// UDPIPOverhead is what IPv4 and UDP add to every datagram (20 + 8 bytes); libsrt counts
	// it with the SRT header (44 bytes) when it paces and estimates rates.
	UDPIPOverhead = 28
	// MaxDatagram is the largest SRT datagram (libsrt's default and largest MSS, 1500, less
	// the IP and UDP headers).
	MaxDatagram = 1500 - UDPIPOverhead
	// MaxPayload is the largest data payload of a 1500-byte MSS: 1456 bytes.
	MaxPayload = MaxDatagram - HeaderSize
)

// IsControl reports whether the datagram b is a control packet (the F bit of word 0). It
// returns false for an empty slice.
func IsControl(b []byte) bool { return len(b) > 0 && b[0]&0x80 != 0 }

// DestSocket returns the destination socket id of the datagram (word 3 of the header).
func DestSocket(b []byte) (uint32, error) {
	if len(b) < HeaderSize {
		return 0, errShortHeader
	}
	return binary.BigEndian.Uint32(b[12:16]), nil
}

var errShortHeader = fmt.Errorf("%w: datagram shorter than the 16-byte SRT header", ErrTruncated)

// Position is the PP field of a data packet: where the packet sits in its message.
type Position uint8

// Positions of a packet in its message. Live mode sends one message per packet: PosSolo.
const (
	PosMiddle Position = 0
	PosLast   Position = 1
	PosFirst  Position = 2
	PosSolo   Position = 3
)

// KeyIndex is the KK field of a data packet: which stream encrypting key (SEK) encrypted the
// payload; a Key Material message (package crypt) carries the same field.
type KeyIndex uint8

// The KK values. In a data packet only KeyNone, KeyEven and KeyOdd occur; a Key Material
// message may carry KeyBoth.
const (
	KeyNone KeyIndex = 0
	KeyEven KeyIndex = 1
	KeyOdd  KeyIndex = 2
	KeyBoth KeyIndex = 3
)

// String names the key index.
func (k KeyIndex) String() string {
	switch k {
	case KeyNone:
		return "none"
	case KeyEven:
		return "even"
	case KeyOdd:
		return "odd"
	case KeyBoth:
		return "both"
	}
	return fmt.Sprintf("KeyIndex(%d)", uint8(k))
}

// Data is a parsed data packet. Payload aliases the datagram it was parsed from.
type Data struct {
	Seq           uint32 // 31-bit packet sequence number
	Position      Position
	InOrder       bool // O flag; libsrt sets it in live mode
	Key           KeyIndex
	Retransmitted bool   // R flag: sent again after a loss report
	MsgNo         uint32 // 26-bit message number
	Timestamp     uint32 // microseconds since the sender's connection start
	DestSocket    uint32
	Payload       []byte
}

var errDataControl = fmt.Errorf("%w: control packet where a data packet is expected", ErrInvalid)

// ParseData parses the data packet b into d. d.Payload aliases b.
func ParseData(b []byte, d *Data) error {
	if len(b) < HeaderSize {
		return errShortHeader
	}
	w0 := binary.BigEndian.Uint32(b[0:4])
	if w0&0x80000000 != 0 {
		return errDataControl
	}
	w1 := binary.BigEndian.Uint32(b[4:8])
	d.Seq = w0
	d.Position = Position(w1 >> 30)
	d.InOrder = w1&(1<<29) != 0
	d.Key = KeyIndex(w1 >> 27 & 3)
	d.Retransmitted = w1&(1<<26) != 0
	d.MsgNo = w1 & MsgNoMask
	d.Timestamp = binary.BigEndian.Uint32(b[8:12])
	d.DestSocket = binary.BigEndian.Uint32(b[12:16])
	d.Payload = b[HeaderSize:]
	return nil
}

// PutDataHeader writes d's header into the first 16 bytes of b, which must have room.
func PutDataHeader(b []byte, d *Data) {
	_ = b[HeaderSize-1]
	binary.BigEndian.PutUint32(b[0:4], d.Seq&SeqMask)
	w1 := uint32(d.Position&3)<<30 | uint32(d.Key&3)<<27 | d.MsgNo&MsgNoMask
	if d.InOrder {
		w1 |= 1 << 29
	}
	if d.Retransmitted {
		w1 |= 1 << 26
	}
	binary.BigEndian.PutUint32(b[4:8], w1)
	binary.BigEndian.PutUint32(b[8:12], d.Timestamp)
	binary.BigEndian.PutUint32(b[12:16], d.DestSocket)
}

// AppendData appends the data packet d (header and payload) to b.
func AppendData(b []byte, d *Data) []byte {
	n := len(b)
	b = append(b, make([]byte, HeaderSize)...)
	PutDataHeader(b[n:], d)
	return append(b, d.Payload...)
}

// SetRetransmitted sets the R flag in the header of the data packet b (at least 16 bytes).
func SetRetransmitted(b []byte) { b[4] |= 1 << 2 }
