package mpegts

import "fmt"

// pesHeader is the part of a PES header the demuxer uses; timestamps are 33-bit 90 kHz.
type pesHeader struct {
	streamID uint8
	hasPTS   bool
	hasDTS   bool
	pts, dts int64
	dataOff  int // offset of the elementary stream data
}

// parsePESHeader parses the header of a complete PES packet.
func parsePESHeader(b []byte) (pesHeader, error) {
	var h pesHeader
	if len(b) < 9 || b[0] != 0 || b[1] != 0 || b[2] != 1 {
		return h, fmt.Errorf("mpegts: PES without start code prefix")
	}
	h.streamID = b[3]
	if b[6]&0xc0 != 0x80 {
		return h, fmt.Errorf("mpegts: PES stream 0x%02x without optional header", h.streamID)
	}
	flags := b[7] >> 6
	h.dataOff = 9 + int(b[8])
	if h.dataOff > len(b) {
		return h, fmt.Errorf("mpegts: PES header length %d overruns %d bytes", b[8], len(b))
	}
	opt := b[9:h.dataOff]
	if flags&0x02 != 0 {
		if len(opt) < 5 {
			return h, fmt.Errorf("mpegts: PES header too short for PTS")
		}
		h.hasPTS, h.pts = true, readTimestamp(opt)
		if flags == 0x03 {
			if len(opt) < 10 {
				return h, fmt.Errorf("mpegts: PES header too short for DTS")
			}
			h.hasDTS, h.dts = true, readTimestamp(opt[5:])
		}
	}
	return h, nil
}

// readTimestamp decodes a 33-bit PTS or DTS spread over five bytes with marker bits.
func readTimestamp(b []byte) int64 {
	return int64(b[0]>>1&0x07)<<30 | int64(b[1])<<22 | int64(b[2]>>1)<<15 | int64(b[3])<<7 | int64(b[4]>>1)
}

// appendTimestamp encodes a 33-bit timestamp with the 4-bit prefix ('0010' PTS only,
// '0011' PTS of a pair, '0001' DTS).
func appendTimestamp(dst []byte, prefix byte, ts int64) []byte {
	return append(dst,
		prefix<<4|byte(ts>>29)&0x0e|1,
		byte(ts>>22),
		byte(ts>>14)|1,
		byte(ts>>7),
		byte(ts<<1)|1)
}

// appendPESHeader writes a PES header for dataLen bytes of elementary stream data. Lengths
// that do not fit in 16 bits are written as 0 (unbounded), which ISO/IEC 13818-1 allows for
// video only.
func appendPESHeader(dst []byte, streamID uint8, pts, dts int64, withDTS bool, dataLen int) []byte {
	hdrLen := 5
	flags := byte(0x80)
	if withDTS {
		hdrLen, flags = 10, 0xc0
	}
	pesLen := 3 + hdrLen + dataLen
	if pesLen > 0xffff {
		pesLen = 0
	}
	dst = append(dst, 0, 0, 1, streamID, byte(pesLen>>8), byte(pesLen), 0x80, flags, byte(hdrLen))
	if withDTS {
		dst = appendTimestamp(dst, 0x03, pts)
		return appendTimestamp(dst, 0x01, dts)
	}
	return appendTimestamp(dst, 0x02, pts)
}
