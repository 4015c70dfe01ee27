package mpegts

import (
	"encoding/binary"
	"fmt"
)

// sectionAssembler joins PSI sections that span packets of one PID. Its buffer never grows
// past maxSectionSize plus one packet.
type sectionAssembler struct {
	buf    []byte
	active bool
}

// push takes one packet of the PID and calls emit for every complete section.
func (a *sectionAssembler) push(p packet, emit func([]byte)) {
	data := p.payload
	if p.pusi {
		if len(data) == 0 {
			a.active = false
			return
		}
		ptr := int(data[0])
		data = data[1:]
		if ptr > len(data) {
			a.active = false
			return
		}
		if a.active {
			a.buf = append(a.buf, data[:ptr]...)
			a.drain(emit)
		}
		a.buf = a.buf[:0]
		a.active = true
		data = data[ptr:]
	} else if !a.active {
		return
	}
	a.buf = append(a.buf, data...)
	a.drain(emit)
}

func (a *sectionAssembler) drain(emit func([]byte)) {
	for a.active && len(a.buf) >= 3 {
		if a.buf[0] == 0xff { // stuffing up to the end of the packet
			a.active = false
			return
		}
		total := 3 + int(binary.BigEndian.Uint16(a.buf[1:])&0x0fff)
		if total > maxSectionSize {
			a.active = false
			return
		}
		if len(a.buf) < total {
			return
		}
		emit(a.buf[:total])
		n := copy(a.buf, a.buf[total:])
		a.buf = a.buf[:n]
	}
}

// section is the long form of a PSI section with its checksum verified.
type section struct {
	tableID     uint8
	idExt       uint16 // transport_stream_id (PAT) or program_number (PMT)
	version     uint8
	currentNext bool
	data        []byte // between the header and the CRC
}

func parseSection(b []byte) (section, error) {
	var s section
	if len(b) < 12 {
		return s, fmt.Errorf("mpegts: PSI section of %d bytes is too short", len(b))
	}
	if b[1]&0x80 == 0 {
		return s, fmt.Errorf("mpegts: PSI table 0x%02x without section_syntax_indicator", b[0])
	}
	n := len(b) - 4
	if got, want := binary.BigEndian.Uint32(b[n:]), crc32MPEG(b[:n]); got != want {
		return s, fmt.Errorf("mpegts: PSI table 0x%02x: CRC 0x%08x, computed 0x%08x", b[0], got, want)
	}
	s.tableID = b[0]
	s.idExt = binary.BigEndian.Uint16(b[3:])
	s.version = b[5] >> 1 & 0x1f
	s.currentNext = b[5]&0x01 != 0
	s.data = b[8:n]
	return s, nil
}

// parsePAT returns the first program and its PMT PID.
func parsePAT(s section) (program uint16, pmtPID uint16, err error) {
	for d := s.data; len(d) >= 4; d = d[4:] {
		num := binary.BigEndian.Uint16(d)
		pid := binary.BigEndian.Uint16(d[2:]) & 0x1fff
		if num != 0 { // program 0 points at the network information table
			return num, pid, nil
		}
	}
	return 0, 0, fmt.Errorf("mpegts: PAT lists no program")
}

// pmtStream is one elementary stream entry of a PMT.
type pmtStream struct {
	streamType uint8
	pid        uint16
	// Opus: registration descriptor "Opus" and its channel count (0 when not given).
	opus         bool
	opusChannels int
}

// parsePMT appends the PMT's elementary streams to dst.
func parsePMT(s section, dst []pmtStream) ([]pmtStream, error) {
	d := s.data
	if len(d) < 4 {
		return dst, fmt.Errorf("mpegts: PMT of program %d is too short", s.idExt)
	}
	infoLen := int(binary.BigEndian.Uint16(d[2:]) & 0x0fff)
	if 4+infoLen > len(d) {
		return dst, fmt.Errorf("mpegts: PMT of program %d: program_info_length %d overruns", s.idExt, infoLen)
	}
	d = d[4+infoLen:]
	for len(d) >= 5 {
		es := pmtStream{streamType: d[0], pid: binary.BigEndian.Uint16(d[1:]) & 0x1fff}
		n := int(binary.BigEndian.Uint16(d[3:]) & 0x0fff)
		if 5+n > len(d) {
			return dst, fmt.Errorf("mpegts: PMT of program %d: ES_info_length %d of PID %d overruns", s.idExt, n, es.pid)
		}
		parseDescriptors(d[5:5+n], &es)
		dst = append(dst, es)
		d = d[5+n:]
	}
	return dst, nil
}

func parseDescriptors(d []byte, es *pmtStream) {
	for len(d) >= 2 {
		tag, n := d[0], int(d[1])
		if 2+n > len(d) {
			return
		}
		body := d[2 : 2+n]
		switch {
		case tag == descTagRegistration && n >= 4 && string(body[:4]) == opusFormatID:
			es.opus = true
		case tag == descTagExtension && n >= 2 && body[0] == descExtTagOpus:
			// channel_config_code: 1 to 8 are channel counts with the Vorbis channel order.
			if c := int(body[1]); c >= 1 && c <= 8 {
				es.opusChannels = c
			} else {
				es.opusChannels = 2
			}
		}
		d = d[2+n:]
	}
}
