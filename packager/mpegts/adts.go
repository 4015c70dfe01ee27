package mpegts

import "fmt"

// aacSampleRates are the sampling_frequency_index values of ISO/IEC 14496-3 table 1.18.
var aacSampleRates = [...]int{96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350}

// aacSamplesPerFrame is the frame length of AAC LC in samples.
const aacSamplesPerFrame = 1024

// adtsHeader is the fixed and variable header of one ADTS frame (ISO/IEC 14496-3 1.A.2).
type adtsHeader struct {
	objectType    int // profile + 1: 2 is AAC LC
	rateIndex     int
	channelConfig int
	headerLen     int // 7, or 9 with the CRC
	frameLen      int // header included
}

func parseADTS(b []byte) (adtsHeader, error) {
	var h adtsHeader
	if len(b) < 7 {
		return h, fmt.Errorf("mpegts: ADTS header: %d bytes left, need 7", len(b))
	}
	if b[0] != 0xff || b[1]&0xf6 != 0xf0 {
		return h, fmt.Errorf("mpegts: ADTS header: no syncword")
	}
	h.headerLen = 7
	if b[1]&0x01 == 0 {
		h.headerLen = 9
	}
	h.objectType = int(b[2]>>6) + 1
	h.rateIndex = int(b[2] >> 2 & 0x0f)
	if h.rateIndex >= len(aacSampleRates) {
		return h, fmt.Errorf("mpegts: ADTS header: sampling frequency index %d", h.rateIndex)
	}
	h.channelConfig = int(b[2]&0x01)<<2 | int(b[3]>>6)
	if h.channelConfig == 0 {
		return h, fmt.Errorf("mpegts: ADTS header: channel configuration in a PCE is not supported")
	}
	if b[6]&0x03 != 0 {
		return h, fmt.Errorf("mpegts: ADTS header: %d raw data blocks in one frame are not supported", b[6]&0x03+1)
	}
	h.frameLen = int(b[3]&0x03)<<11 | int(b[4])<<3 | int(b[5]>>5)
	if h.frameLen <= h.headerLen || h.frameLen > len(b) {
		return h, fmt.Errorf("mpegts: ADTS frame length %d with %d bytes left", h.frameLen, len(b))
	}
	return h, nil
}

func (h adtsHeader) sampleRate() int { return aacSampleRates[h.rateIndex] }

func (h adtsHeader) channels() int {
	if h.channelConfig == 7 {
		return 8
	}
	return h.channelConfig
}

// appendADTS writes a 7-byte ADTS header without CRC for a raw frame of n bytes.
func appendADTS(dst []byte, objectType, rateIndex, channelConfig, n int) []byte {
	l := n + 7
	const fullness = 0x7ff // variable bit rate
	return append(dst,
		0xff, 0xf1,
		byte((objectType-1)<<6|rateIndex<<2|channelConfig>>2&0x01),
		byte(channelConfig&0x03<<6|l>>11&0x03),
		byte(l>>3),
		byte(l&0x07<<5|fullness>>6),
		byte(fullness&0x3f<<2))
}
