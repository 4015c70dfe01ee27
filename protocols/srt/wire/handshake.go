package wire

import (
	"encoding/binary"
	"fmt"
	"net/netip"
)

// HandshakeCIFLen is the fixed part of a handshake CIF: ten 32-bit fields and the 128-bit peer
// address.
const HandshakeCIFLen = 48

// HandshakeType is the handshake type field (UDT's request type): a phase of the exchange, or
// a rejection (1000 + reason).
type HandshakeType uint32

// Handshake types (libsrt's UDTRequestType).
const (
	HSWaveAHand  HandshakeType = 0
	HSInduction  HandshakeType = 1
	HSConclusion HandshakeType = 0xFFFFFFFF // -1
	HSAgreement  HandshakeType = 0xFFFFFFFE // -2
	HSDone       HandshakeType = 0xFFFFFFFD // -3
	// HSRejectBase is added to a rejection reason to make the handshake type that carries it.
	HSRejectBase HandshakeType = 1000
)

// IsRejection reports whether t carries a rejection reason.
func (t HandshakeType) IsRejection() bool { return t >= HSRejectBase && t < HSDone }

// RejectReason returns the rejection reason t carries (libsrt's SRT_REJ_* and SRT_REJX_*).
func (t HandshakeType) RejectReason() uint32 { return uint32(t - HSRejectBase) }

// Rejection returns the handshake type that carries reason.
func Rejection(reason uint32) HandshakeType { return HSRejectBase + HandshakeType(reason) }

// String names the handshake type.
func (t HandshakeType) String() string {
	switch t {
	case HSWaveAHand:
		return "waveahand"
	case HSInduction:
		return "induction"
	case HSConclusion:
		return "conclusion"
	case HSAgreement:
		return "agreement"
	case HSDone:
		return "done"
	}
	if t.IsRejection() {
		return fmt.Sprintf("rejection(%d)", t.RejectReason())
	}
	return fmt.Sprintf("handshake-type(%d)", uint32(t))
}

// Handshake versions and the values of the extension field outside a conclusion.
const (
	HSVersion4 = 4 // UDT legacy handshake (and every caller's induction)
	HSVersion5 = 5 // SRT integrated handshake, libsrt 1.3.0 and later
	// UDTDgram is the socket type HSv4 puts in the extension field, and what a caller's
	// induction carries there.
	UDTDgram = 2
	// SRTMagic is what an HSv5 listener puts in the extension field of its induction answer.
	SRTMagic = 0x4A17
)

// Extension field flags of an HSv5 conclusion: which extension blocks follow.
const (
	HSExtHSReq  = 0x1
	HSExtKMReq  = 0x2
	HSExtConfig = 0x4 // stream id, congestion controller, filter or group follow
)

// SRT flags of the HSREQ/HSRSP extension (SRT_OPT_*).
const (
	FlagTSBPDSnd     = 1 << 0 // sends in TSBPD mode
	FlagTSBPDRcv     = 1 << 1 // receives in TSBPD mode
	FlagCrypt        = 1 << 2 // understands the KK bits (legacy; always set)
	FlagTLPktDrop    = 1 << 3 // too-late packet drop
	FlagNAKReport    = 1 << 4 // periodic NAK reports
	FlagRexmitFlag   = 1 << 5 // understands the R bit (legacy; always set)
	FlagStream       = 1 << 6 // stream (file) transmission instead of messages
	FlagPacketFilter = 1 << 7 // supports packet filters
)

// Caps on what a peer can size in a handshake.
const (
	// MaxStreamID is the longest stream id SRT allows (SRTO_STREAMID), in bytes.
	MaxStreamID = 512
	// MaxKM is the largest Key Material message: 16 bytes of header, a 16-byte salt, and two
	// wrapped 256-bit keys with the 8-byte integrity block.
	MaxKM = 16 + 16 + 2*32 + 8
	// MaxCongestion caps the congestion controller name ("live" or "file" in libsrt).
	MaxCongestion = 64
	// maxConfigExt caps the packet filter and group extensions, which are only recognised.
	maxConfigExt = 512
)

// HSExt is the content of an HSREQ or HSRSP extension.
type HSExt struct {
	Version   uint32 // SRT version 0x00XXYYZZ for XX.YY.ZZ
	Flags     uint32 // Flag* bits
	RecvDelay uint16 // receiver TSBPD delay, milliseconds (upper 16 bits)
	SendDelay uint16 // sender TSBPD delay, milliseconds (lower 16 bits)
}

// Handshake is a parsed handshake CIF with its HSv5 extensions. KM aliases the datagram; the
// stream id and congestion name are copied into fixed arrays, so parsing does not allocate.
type Handshake struct {
	Version    uint32
	Encryption uint16 // advertised PBKEYLEN/8: 0, 2, 3 or 4
	Extension  uint16 // HSExt* flags in a conclusion, SRTMagic in an induction answer, UDTDgram otherwise
	InitialSeq uint32
	MTU        uint32
	FlowWindow uint32
	Type       HandshakeType
	SocketID   uint32
	Cookie     uint32
	PeerIP     [16]byte

	// HSCmd is ExtHSReq or ExtHSRsp when that extension is present, else 0.
	HSCmd uint16
	HS    HSExt
	// KMCmd is ExtKMReq or ExtKMRsp when that extension is present, else 0.
	KMCmd uint16
	KM    []byte

	HasStreamID   bool
	HasCongestion bool
	HasFilter     bool // a packet filter extension (recognised, to be refused)
	HasGroup      bool // a group membership extension (recognised, to be refused)

	sid     [MaxStreamID]byte
	sidLen  int
	cong    [MaxCongestion]byte
	congLen int
}

// StreamID returns the stream id extension's text.
func (h *Handshake) StreamID() string { return string(h.sid[:h.sidLen]) }

// SetStreamID sets the stream id extension (at most MaxStreamID bytes).
func (h *Handshake) SetStreamID(s string) error {
	if len(s) > MaxStreamID {
		return fmt.Errorf("stream id of %d bytes over %d: %w", len(s), MaxStreamID, ErrTooLarge)
	}
	h.sidLen = copy(h.sid[:], s)
	h.HasStreamID = true
	return nil
}

// Congestion returns the congestion controller extension's name.
func (h *Handshake) Congestion() string { return string(h.cong[:h.congLen]) }

// SetCongestion sets the congestion controller extension (at most MaxCongestion bytes).
func (h *Handshake) SetCongestion(s string) error {
	if len(s) > MaxCongestion {
		return fmt.Errorf("congestion name of %d bytes over %d: %w", len(s), MaxCongestion, ErrTooLarge)
	}
	h.congLen = copy(h.cong[:], s)
	h.HasCongestion = true
	return nil
}

// PeerAddr returns the peer address field, in libsrt's layout (see PutPeerAddr).
func (h *Handshake) PeerAddr() netip.Addr {
	var a [16]byte
	for i := 0; i < 16; i += 4 {
		binary.BigEndian.PutUint32(a[i:], binary.LittleEndian.Uint32(h.PeerIP[i:]))
	}
	if binary.BigEndian.Uint32(a[4:]) == 0 && binary.BigEndian.Uint64(a[8:]) == 0 {
		return netip.AddrFrom4([4]byte(a[:4]))
	}
	return netip.AddrFrom16(a)
}

// PutPeerAddr sets the peer address field. libsrt writes each 32-bit word of the address in
// host (little-endian) order, so 127.0.0.1 reads 01 00 00 7f on the wire; an IPv4 address
// fills the first word and leaves the other three zero.
func (h *Handshake) PutPeerAddr(a netip.Addr) {
	h.PeerIP = [16]byte{}
	var raw []byte
	if a.Is4() {
		v := a.As4()
		raw = v[:]
	} else {
		v := a.As16()
		raw = v[:]
	}
	for i := 0; i+4 <= len(raw); i += 4 {
		binary.LittleEndian.PutUint32(h.PeerIP[i:], binary.BigEndian.Uint32(raw[i:]))
	}
}

var (
	errHSShort    = fmt.Errorf("%w: handshake CIF shorter than 48 bytes", ErrTruncated)
	errExtHeader  = fmt.Errorf("%w: handshake extension area shorter than a 4-byte block header", ErrTruncated)
	errExtBody    = fmt.Errorf("%w: handshake extension block longer than the datagram", ErrTruncated)
	errExtHSShort = fmt.Errorf("%w: HSREQ/HSRSP extension shorter than 3 words", ErrTruncated)
	errExtTwice   = fmt.Errorf("%w: handshake extension given twice", ErrInvalid)
	errExtKMEmpty = fmt.Errorf("%w: empty key material extension", ErrTruncated)
	errExtKMLarge = fmt.Errorf("%w: key material extension over %d bytes", ErrTooLarge, MaxKM)
	errExtSID     = fmt.Errorf("%w: stream id extension over %d bytes", ErrTooLarge, MaxStreamID)
	errExtCong    = fmt.Errorf("%w: congestion extension over %d bytes", ErrTooLarge, MaxCongestion)
	errExtConfig  = fmt.Errorf("%w: filter or group extension over %d bytes", ErrTooLarge, maxConfigExt)
)

// ParseHandshake parses a handshake CIF into h. Extension blocks are read after the fixed 48
// bytes of an HSv5 (or later) conclusion or agreement; unknown extension types are skipped.
func ParseHandshake(cif []byte, h *Handshake) error {
	*h = Handshake{}
	if len(cif) < HandshakeCIFLen {
		return errHSShort
	}
	h.Version = binary.BigEndian.Uint32(cif[0:4])
	h.Encryption = binary.BigEndian.Uint16(cif[4:6])
	h.Extension = binary.BigEndian.Uint16(cif[6:8])
	h.InitialSeq = binary.BigEndian.Uint32(cif[8:12])
	h.MTU = binary.BigEndian.Uint32(cif[12:16])
	h.FlowWindow = binary.BigEndian.Uint32(cif[16:20])
	h.Type = HandshakeType(binary.BigEndian.Uint32(cif[20:24]))
	h.SocketID = binary.BigEndian.Uint32(cif[24:28])
	h.Cookie = binary.BigEndian.Uint32(cif[28:32])
	copy(h.PeerIP[:], cif[32:48])
	if h.Version < HSVersion5 || (h.Type != HSConclusion && h.Type != HSAgreement) {
		return nil
	}
	return h.parseExtensions(cif[HandshakeCIFLen:])
}

func (h *Handshake) parseExtensions(b []byte) error {
	for len(b) > 0 {
		if len(b) < 4 {
			return errExtHeader
		}
		typ := binary.BigEndian.Uint16(b[0:2])
		n := int(binary.BigEndian.Uint16(b[2:4])) * 4
		if n > len(b)-4 {
			return errExtBody
		}
		body := b[4 : 4+n]
		b = b[4+n:]
		switch typ {
		case ExtHSReq, ExtHSRsp:
			if h.HSCmd != 0 {
				return errExtTwice
			}
			if len(body) < 12 {
				return errExtHSShort
			}
			h.HSCmd = typ
			h.HS.Version = binary.BigEndian.Uint32(body[0:4])
			h.HS.Flags = binary.BigEndian.Uint32(body[4:8])
			h.HS.RecvDelay = binary.BigEndian.Uint16(body[8:10])
			h.HS.SendDelay = binary.BigEndian.Uint16(body[10:12])
		case ExtKMReq, ExtKMRsp:
			if h.KMCmd != 0 {
				return errExtTwice
			}
			if len(body) == 0 {
				return errExtKMEmpty
			}
			if len(body) > MaxKM {
				return errExtKMLarge
			}
			h.KMCmd, h.KM = typ, body
		case ExtSID:
			if h.HasStreamID {
				return errExtTwice
			}
			if len(body) > MaxStreamID {
				return errExtSID
			}
			h.sidLen = decodeString(h.sid[:], body)
			h.HasStreamID = true
		case ExtCongestion:
			if h.HasCongestion {
				return errExtTwice
			}
			if len(body) > MaxCongestion {
				return errExtCong
			}
			h.congLen = decodeString(h.cong[:], body)
			h.HasCongestion = true
		case ExtFilter, ExtGroup:
			if len(body) > maxConfigExt {
				return errExtConfig
			}
			if typ == ExtFilter {
				h.HasFilter = true
			} else {
				h.HasGroup = true
			}
		}
	}
	return nil
}

// decodeString reads a string extension (stream id, congestion): the text is padded with NULs
// to whole 32-bit words and each word is stored byte-reversed. It copies into dst (at least
// len(src) bytes) and returns the length without the padding.
func decodeString(dst, src []byte) int {
	for i := 0; i+4 <= len(src); i += 4 {
		dst[i], dst[i+1], dst[i+2], dst[i+3] = src[i+3], src[i+2], src[i+1], src[i]
	}
	n := len(src)
	for n > 0 && dst[n-1] == 0 {
		n--
	}
	return n
}

// appendString appends s as a string extension body (see decodeString).
func appendString(b []byte, s []byte) []byte {
	for i := 0; i < len(s); i += 4 {
		var w [4]byte
		copy(w[:], s[i:])
		b = append(b, w[3], w[2], w[1], w[0])
	}
	return b
}

func appendExtHeader(b []byte, typ uint16, bodyLen int) []byte {
	b = binary.BigEndian.AppendUint16(b, typ)
	return binary.BigEndian.AppendUint16(b, uint16((bodyLen+3)/4))
}

// AppendHandshake appends the handshake CIF of h to b, with the extensions h carries: HSREQ or
// HSRSP (HSCmd), KMREQ or KMRSP (KMCmd, KM padded to whole words), stream id and congestion.
// Filter and group extensions are never written.
func AppendHandshake(b []byte, h *Handshake) []byte {
	b = binary.BigEndian.AppendUint32(b, h.Version)
	b = binary.BigEndian.AppendUint16(b, h.Encryption)
	b = binary.BigEndian.AppendUint16(b, h.Extension)
	b = binary.BigEndian.AppendUint32(b, h.InitialSeq)
	b = binary.BigEndian.AppendUint32(b, h.MTU)
	b = binary.BigEndian.AppendUint32(b, h.FlowWindow)
	b = binary.BigEndian.AppendUint32(b, uint32(h.Type))
	b = binary.BigEndian.AppendUint32(b, h.SocketID)
	b = binary.BigEndian.AppendUint32(b, h.Cookie)
	b = append(b, h.PeerIP[:]...)
	if h.HSCmd != 0 {
		b = appendExtHeader(b, h.HSCmd, 12)
		b = binary.BigEndian.AppendUint32(b, h.HS.Version)
		b = binary.BigEndian.AppendUint32(b, h.HS.Flags)
		b = binary.BigEndian.AppendUint16(b, h.HS.RecvDelay)
		b = binary.BigEndian.AppendUint16(b, h.HS.SendDelay)
	}
	if h.KMCmd != 0 && len(h.KM) > 0 {
		b = appendExtHeader(b, h.KMCmd, len(h.KM))
		b = append(b, h.KM...)
		for pad := (4 - len(h.KM)%4) % 4; pad > 0; pad-- {
			b = append(b, 0)
		}
	}
	if h.HasStreamID && h.sidLen > 0 {
		b = appendExtHeader(b, ExtSID, h.sidLen)
		b = appendString(b, h.sid[:h.sidLen])
	}
	if h.HasCongestion && h.congLen > 0 {
		b = appendExtHeader(b, ExtCongestion, h.congLen)
		b = appendString(b, h.cong[:h.congLen])
	}
	return b
}
