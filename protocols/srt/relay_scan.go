package srt

// tsPacket is the size of an MPEG-TS packet.
const tsPacket = 188

// MPEG-TS stream types of the video codecs sluice carries (ISO/IEC 13818-1 table 2-34).
const (
	streamTypeH264 = 0x1b
	streamTypeH265 = 0x24
)

// tsScan follows the program of a publisher's MPEG-TS just enough to find random access
// points: the PAT names the PMT's PID, the PMT the video PID (or, without video, the first
// elementary stream), and a random access point is a packet of that PID that starts a PES and
// either carries the random_access_indicator or begins with a key frame's NAL units. It keeps
// the latest single-packet PAT and PMT so that a receiver can start with them.
type tsScan struct {
	pmtPID   uint16
	esPID    uint16 // the PID whose PES starts are checked
	esType   uint8  // its stream type
	haveES   bool
	pat, pmt [tsPacket]byte
	havePAT  bool
	havePMT  bool
	psiOK    bool // pat and pmt are current and each fits one packet
	psiBuf   [2 * tsPacket]byte
}

// psi returns the kept PAT and PMT packets.
func (s *tsScan) psi() []byte {
	copy(s.psiBuf[:tsPacket], s.pat[:])
	copy(s.psiBuf[tsPacket:], s.pmt[:])
	return s.psiBuf[:]
}

// payload scans the TS packets of p and returns the index of the first one that is a random
// access point, or -1. Packets out of sync are skipped.
func (s *tsScan) payload(p []byte) int {
	rap := -1
	for i := 0; (i+1)*tsPacket <= len(p); i++ {
		if s.packet(p[i*tsPacket:(i+1)*tsPacket]) && rap < 0 {
			rap = i
		}
	}
	return rap
}

// packet reads one TS packet and reports whether it is a random access point.
func (s *tsScan) packet(pkt []byte) bool {
	if pkt[0] != 0x47 {
		return false
	}
	pid := uint16(pkt[1]&0x1f)<<8 | uint16(pkt[2])
	pusi := pkt[1]&0x40 != 0
	afc := pkt[3] >> 4 & 3
	off := 4
	rai := false
	if afc&2 != 0 {
		afLen := int(pkt[4])
		if afLen > 0 && 5 < len(pkt) {
			rai = pkt[5]&0x40 != 0
		}
		off += 1 + afLen
	}
	if afc&1 == 0 || off >= len(pkt) || !pusi {
		return false
	}
	body := pkt[off:]
	switch {
	case pid == 0:
		s.readPAT(pkt, body)
	case s.pmtPID != 0 && pid == s.pmtPID:
		s.readPMT(pkt, body)
	case s.haveES && pid == s.esPID:
		return rai || s.keyStart(body)
	}
	return false
}

// section returns the PSI section that starts in a packet's payload (after its pointer field)
// when the whole section is in this packet.
func section(body []byte) ([]byte, bool) {
	ptr := int(body[0])
	if 1+ptr+3 > len(body) {
		return nil, false
	}
	sec := body[1+ptr:]
	n := 3 + (int(sec[1]&0x0f)<<8 | int(sec[2]))
	if n > len(sec) || n < 12 {
		return nil, false
	}
	return sec[:n], true
}

// readPAT takes the PMT PID of the first program.
func (s *tsScan) readPAT(pkt, body []byte) {
	sec, ok := section(body)
	if !ok || sec[0] != 0x00 {
		s.psiOK = false
		return
	}
	for i := 8; i+4 <= len(sec)-4; i += 4 {
		if prog := uint16(sec[i])<<8 | uint16(sec[i+1]); prog != 0 {
			pmt := uint16(sec[i+2]&0x1f)<<8 | uint16(sec[i+3])
			if pmt != s.pmtPID {
				s.pmtPID, s.havePMT, s.haveES = pmt, false, false
			}
			copy(s.pat[:], pkt)
			s.havePAT = true
			s.psiOK = s.havePAT && s.havePMT
			return
		}
	}
}

// readPMT takes the video PID, or the first elementary stream's without video.
func (s *tsScan) readPMT(pkt, body []byte) {
	sec, ok := section(body)
	if !ok || sec[0] != 0x02 || len(sec) < 16 {
		s.psiOK = false
		return
	}
	infoLen := int(sec[10]&0x0f)<<8 | int(sec[11])
	var firstPID uint16
	var firstType uint8
	found := false
	for i := 12 + infoLen; i+5 <= len(sec)-4; {
		typ := sec[i]
		pid := uint16(sec[i+1]&0x1f)<<8 | uint16(sec[i+2])
		esLen := int(sec[i+3]&0x0f)<<8 | int(sec[i+4])
		if !found && firstPID == 0 {
			firstPID, firstType = pid, typ
		}
		if !found && (typ == streamTypeH264 || typ == streamTypeH265) {
			firstPID, firstType, found = pid, typ, true
		}
		i += 5 + esLen
	}
	if firstPID == 0 {
		return
	}
	s.esPID, s.esType, s.haveES = firstPID, firstType, true
	copy(s.pmt[:], pkt)
	s.havePMT = true
	s.psiOK = s.havePAT && s.havePMT
}

// keyStart reports whether a PES that starts in body begins a key frame: its first NAL units
// (within this packet) include a parameter set or an IDR/IRAP slice. Streams without video
// start anywhere a PES starts.
func (s *tsScan) keyStart(body []byte) bool {
	if s.esType != streamTypeH264 && s.esType != streamTypeH265 {
		return true
	}
	// PES header: start code prefix (3), stream id, length (2), flags (2), header length.
	if len(body) < 9 || body[0] != 0 || body[1] != 0 || body[2] != 1 {
		return false
	}
	es := body[min(9+int(body[8]), len(body)):]
	for i := 0; i+3 < len(es); i++ {
		if es[i] != 0 || es[i+1] != 0 || es[i+2] != 1 {
			continue
		}
		h := es[i+3]
		if s.esType == streamTypeH264 {
			switch h & 0x1f {
			case 5, 7: // IDR slice, SPS
				return true
			}
			continue
		}
		switch t := h >> 1 & 0x3f; {
		case t >= 16 && t <= 21, t >= 32 && t <= 34: // IRAP slices, VPS, SPS, PPS
			return true
		}
	}
	return false
}
