package mpegts

// afFields are the adaptation field flags of the first packet of a PES.
type afFields struct {
	discontinuity bool
	randomAccess  bool
	hasPCR        bool
	pcr           int64 // 33-bit base at 90 kHz; the 27 MHz extension is 0
}

// appendPES cuts a PES header and its data into packets of the track's PID. The first packet
// carries the adaptation field flags; the last is filled with adaptation field stuffing.
func appendPES(dst []byte, t *muxTrack, hdr, data []byte, af afFields) []byte {
	total := len(hdr) + len(data)
	for pos, first := 0, true; pos < total; first = false {
		var flags byte
		if first {
			if af.discontinuity {
				flags |= 0x80
			}
			if af.randomAccess {
				flags |= 0x40
			}
			if af.hasPCR {
				flags |= 0x10
			}
		}
		var pusi byte
		if first {
			pusi = 0x40
		}
		remaining := total - pos
		// afLen counts every adaptation field byte, its length byte included.
		afLen := 0
		if flags != 0 {
			afLen = 2
			if flags&0x10 != 0 {
				afLen += 6
			}
		}
		if space := PacketSize - 4 - afLen; remaining < space {
			afLen += space - remaining
		}
		afc := byte(0x10)
		if afLen > 0 {
			afc = 0x30
		}
		dst = append(dst, syncByte, pusi|byte(t.pid>>8), byte(t.pid), afc|t.cc)
		t.cc = (t.cc + 1) & 0x0f
		if afLen > 0 {
			dst = appendAdaptation(dst, afLen, flags, af.pcr)
		}
		n := PacketSize - 4 - afLen
		if pos < len(hdr) {
			k := min(n, len(hdr)-pos)
			dst = append(dst, hdr[pos:pos+k]...)
			pos, n = pos+k, n-k
		}
		if n > 0 {
			off := pos - len(hdr)
			dst = append(dst, data[off:off+n]...)
			pos += n
		}
	}
	return dst
}

// appendAdaptation writes an adaptation field of afLen bytes (length byte included): the
// flags, the PCR when flagged, then stuffing bytes.
func appendAdaptation(dst []byte, afLen int, flags byte, pcr int64) []byte {
	dst = append(dst, byte(afLen-1))
	if afLen == 1 {
		return dst // a single stuffing byte: the length byte alone
	}
	dst = append(dst, flags)
	used := 2
	if flags&0x10 != 0 {
		dst = append(dst, byte(pcr>>25), byte(pcr>>17), byte(pcr>>9), byte(pcr>>1), byte(pcr&1)<<7|0x7e, 0)
		used += 6
	}
	for ; used < afLen; used++ {
		dst = append(dst, 0xff)
	}
	return dst
}
