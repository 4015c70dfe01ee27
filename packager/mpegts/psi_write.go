package mpegts

import (
	"encoding/binary"
	"fmt"
)

// Program layout written by the Muxer: one program, its PMT on PID 0x1000 and elementary
// streams from PID 0x100, as ffmpeg does.
const (
	muxProgram  = 1
	muxTSID     = 1
	muxPMTPID   = 0x1000
	muxFirstPID = 0x100
)

// appendSection writes a long-form PSI section (version 0, current, one section) with its CRC.
func appendSection(dst []byte, tableID uint8, idExt uint16, body []byte) []byte {
	start := len(dst)
	n := 5 + len(body) + 4 // the fields after section_length, the body and the CRC
	dst = append(dst, tableID, 0xb0|byte(n>>8), byte(n), byte(idExt>>8), byte(idExt), 0xc1, 0, 0)
	dst = append(dst, body...)
	return binary.BigEndian.AppendUint32(dst, crc32MPEG(dst[start:]))
}

// tablePacket wraps a section in one packet; its continuity counter is set on each write.
func tablePacket(pid uint16, section []byte) ([PacketSize]byte, error) {
	var p [PacketSize]byte
	if 5+len(section) > PacketSize {
		return p, fmt.Errorf("mpegts: PSI section of %d bytes does not fit one packet", len(section))
	}
	p[0], p[1], p[2], p[3], p[4] = syncByte, 0x40|byte(pid>>8), byte(pid), 0x10, 0
	n := copy(p[5:], section)
	for i := 5 + n; i < PacketSize; i++ {
		p[i] = 0xff
	}
	return p, nil
}

func buildPAT() ([PacketSize]byte, error) {
	body := []byte{0, muxProgram, 0xe0 | muxPMTPID>>8, muxPMTPID & 0xff}
	return tablePacket(pidPAT, appendSection(nil, tableIDPAT, muxTSID, body))
}

func buildPMT(tracks []muxTrack, pcrPID uint16) ([PacketSize]byte, error) {
	body := []byte{0xe0 | byte(pcrPID>>8), byte(pcrPID), 0xf0, 0} // no program descriptors
	for _, t := range tracks {
		var desc []byte
		if t.streamType == streamTypePrivate { // Opus
			desc = append(desc, descTagRegistration, 4)
			desc = append(desc, opusFormatID...)
			desc = append(desc, descTagExtension, 2, descExtTagOpus, byte(t.Params.Channels))
		}
		body = append(body, t.streamType, 0xe0|byte(t.pid>>8), byte(t.pid), 0xf0|byte(len(desc)>>8), byte(len(desc)))
		body = append(body, desc...)
	}
	return tablePacket(muxPMTPID, appendSection(nil, tableIDPMT, muxProgram, body))
}
