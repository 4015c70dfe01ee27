package avi

import (
	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/mp3"
)

// Largest frame of the audio codecs carried, in bytes: what nBlockAlign states, so that a
// reader that counts a chunk of n bytes as ceil(n/nBlockAlign) frames (ffmpeg, VLC) counts
// every chunk as one frame. An AAC raw data block holds at most 6144 bits a channel
// (ISO/IEC 14496-3 4.5.3.2), which is also the value ffmpeg writes; an MPEG-1 layer III
// frame at 320 kbit/s and 32 kHz with padding is 144×320000/32000+1 bytes, the largest of
// any layer III frame (MPEG-2 and 2.5 halve both the bit rates and the factor).
const (
	aacMaxFrameBytesPerChannel = 768
	mp3MaxFrameBytes           = 1441
)

// blockAlign returns the nBlockAlign of an audio stream: its largest frame.
func blockAlign(trk media.Track) int {
	if trk.Codec == media.CodecAAC {
		return aacMaxFrameBytesPerChannel * max(trk.Params.Channels, 1)
	}
	return mp3MaxFrameBytes
}

// silentFrame returns an audio frame that decodes to silence, to fill a gap in an audio
// stream's timeline: with nBlockAlign set, readers count an empty chunk as no frame, so a gap
// filled with empty chunks would put the rest of the audio early. sample is a frame of the
// stream (MP3 takes its header from it). It returns nil when it cannot make one.
func silentFrame(trk media.Track, sample []byte) []byte {
	switch trk.Codec {
	case media.CodecAAC:
		return silentAAC(trk.Params.AudioConfig)
	case media.CodecMP3:
		return silentMP3(sample)
	}
	return nil
}

// silentMP3 returns a layer III frame of the same header as sample, without CRC, whose side
// information is all zero: no main data, no spectral values, silence.
func silentMP3(sample []byte) []byte {
	h, err := mp3.Parse(sample)
	if err != nil {
		return nil
	}
	n := h.Len()
	if n < 4+32 || n > mp3MaxFrameBytes { // header and the largest side information
		return nil
	}
	b := make([]byte, n)
	copy(b, sample[:4])
	b[1] |= 0x01 // protection_bit 1: no CRC follows the header
	return b
}

// AAC syntactic element ids (ISO/IEC 14496-3 table 4.85).
const (
	aacSCE = 0
	aacCPE = 1
	aacLFE = 3
	aacEND = 7
)

// aacLayouts are the elements of the raw data block of each channelConfiguration 1 to 7
// (ISO/IEC 14496-3 table 1.19).
var aacLayouts = [8][]int{
	1: {aacSCE},
	2: {aacCPE},
	3: {aacSCE, aacCPE},
	4: {aacSCE, aacCPE, aacSCE},
	5: {aacSCE, aacCPE, aacCPE},
	6: {aacSCE, aacCPE, aacCPE, aacLFE},
	7: {aacSCE, aacCPE, aacCPE, aacCPE, aacLFE},
}

// silentAAC returns a raw data block of the AudioSpecificConfig's channel configuration whose
// channels carry no spectral data (max_sfb 0): silence. Only the audio object types whose
// channel syntax is the plain one are served: Main, LC, LTP, and SBR or PS over them.
func silentAAC(asc []byte) []byte {
	aot, chans, ok := parseASC(asc)
	if !ok || chans < 1 || chans >= len(aacLayouts) {
		return nil
	}
	switch aot {
	case 1, 2, 4, 5, 29:
	default:
		return nil
	}
	var w bitWriter
	tags := [8]uint32{}
	for _, el := range aacLayouts[chans] {
		w.put(uint32(el), 3)
		w.put(tags[el], 4) // element_instance_tag: one more for each element of a kind
		tags[el]++
		ics := 1
		if el == aacCPE {
			w.put(0, 1) // common_window
			ics = 2
		}
		for range ics {
			w.put(0, 8) // global_gain: no spectral values to scale
			// ics_info: ics_reserved_bit, window_sequence ONLY_LONG, window_shape, max_sfb 0,
			// predictor_data_present 0; with no band, no section or scale factor data.
			w.put(0, 1+2+1+6+1)
			w.put(0, 3) // pulse_data_present, tns_data_present, gain_control_data_present
		}
	}
	w.put(aacEND, 3)
	return w.bytes()
}

// parseASC reads the audio object type and channel configuration of an AudioSpecificConfig
// (ISO/IEC 14496-3 1.6.2.1).
func parseASC(asc []byte) (aot, channels int, ok bool) {
	r := bitReader{b: asc}
	aot = int(r.get(5))
	if aot == 31 {
		aot = 32 + int(r.get(6))
	}
	if r.get(4) == 0x0f { // samplingFrequencyIndex escape: a 24-bit frequency follows
		r.get(24)
	}
	channels = int(r.get(4))
	return aot, channels, !r.short
}

// bitWriter writes bits most significant first.
type bitWriter struct {
	b []byte
	n int // bits written
}

func (w *bitWriter) put(v uint32, bits int) {
	for i := bits - 1; i >= 0; i-- {
		if w.n%8 == 0 {
			w.b = append(w.b, 0)
		}
		if v>>uint(i)&1 == 1 {
			w.b[len(w.b)-1] |= 0x80 >> uint(w.n%8)
		}
		w.n++
	}
}

// bytes returns what was written, the last byte padded with zero bits.
func (w *bitWriter) bytes() []byte { return w.b }

// bitReader reads bits most significant first; short is set once it reads past the end.
type bitReader struct {
	b     []byte
	n     int
	short bool
}

func (r *bitReader) get(bits int) uint32 {
	var v uint32
	for range bits {
		if r.n >= 8*len(r.b) {
			r.short = true
			return 0
		}
		v = v<<1 | uint32(r.b[r.n/8]>>(7-uint(r.n%8))&1)
		r.n++
	}
	return v
}

// SilentFrame returns an audio frame of trk that decodes to silence, and its duration in
// samples at rate (AAC: 1024 samples at the track's sample rate; MP3: the frame's samples
// at its sample rate); sample is a frame of the stream. It returns nil for a codec or an
// AudioSpecificConfig it cannot serve, as the AVI writer's gaps do.
func SilentFrame(trk media.Track, sample []byte) (frame []byte, samples, rate int) {
	frame = silentFrame(trk, sample)
	if frame == nil {
		return nil, 0, 0
	}
	switch trk.Codec {
	case media.CodecAAC:
		rate = trk.Params.SampleRate
		if rate <= 0 {
			rate = trk.ClockRate
		}
		return frame, aacFrameSamples, rate
	case media.CodecMP3:
		h, err := mp3.Parse(sample)
		if err != nil {
			return nil, 0, 0
		}
		return frame, h.SampleCount(), h.SampleRate
	}
	return nil, 0, 0
}
