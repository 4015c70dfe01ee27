// Package flv reads and writes FLV tags: the bodies of RTMP audio and video messages and the
// tags of FLV files, legacy and enhanced RTMP (FourCC), in terms of media tracks and access
// units. It carries H.264 and H.265 video, AAC and MP3 audio, and reads Opus.
package flv

import (
	"encoding/binary"
	"fmt"
)

// TagType is the type of an FLV tag, which is also the RTMP message type.
type TagType uint8

// Tag types.
const (
	TagAudio  TagType = 8
	TagVideo  TagType = 9
	TagScript TagType = 18
)

// Tag is one FLV tag: an RTMP audio, video or data message, or a tag of an FLV file.
type Tag struct {
	Type TagType
	// Timestamp is the DTS in milliseconds; it wraps around after 2^32 ms.
	Timestamp uint32
	Body      []byte
}

// PacketType tells what a tag body carries.
type PacketType uint8

// Packet types.
const (
	PacketUnknown PacketType = iota
	// PacketSequenceHeader carries the decoder configuration (AVC/AAC sequence header,
	// enhanced RTMP SequenceStart).
	PacketSequenceHeader
	// PacketCodedFrames carries a coded frame.
	PacketCodedFrames
	// PacketSequenceEnd ends a sequence.
	PacketSequenceEnd
	// PacketOther carries nothing to decode: metadata, commands, multichannel configuration.
	PacketOther
)

// FourCC identifies a codec in enhanced RTMP.
type FourCC uint32

// String returns the four characters, quoted when not printable.
func (f FourCC) String() string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(f))
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return fmt.Sprintf("%q", b[:])
		}
	}
	return string(b[:])
}

func fourCC(s string) FourCC { return FourCC(binary.BigEndian.Uint32([]byte(s))) }

// FourCCs of enhanced RTMP (veovera enhanced-rtmp v1 and v2).
var (
	FourCCAVC  = fourCC("avc1")
	FourCCHEVC = fourCC("hvc1")
	FourCCAV1  = fourCC("av01")
	FourCCVP9  = fourCC("vp09")
	FourCCVP8  = fourCC("vp08")
	FourCCAAC  = fourCC("mp4a")
	FourCCMP3  = fourCC(".mp3")
	FourCCOpus = fourCC("Opus")
	FourCCFLAC = fourCC("fLaC")
	FourCCAC3  = fourCC("ac-3")
	FourCCEAC3 = fourCC("ec-3")
)

// Legacy video codec IDs (FLV 10.1 annex E.4.3.1), 12 being the HEVC extension of Chinese CDNs.
const (
	videoCodecAVC  = 7
	videoCodecHEVC = 12
)

// Legacy sound formats (FLV 10.1 annex E.4.2.1).
const (
	soundMP3      = 2
	soundExHeader = 9 // enhanced RTMP audio
	soundAAC      = 10
	soundMP38kHz  = 14
)

// Enhanced RTMP packet types.
const (
	exSequenceStart   = 0
	exCodedFrames     = 1
	exSequenceEnd     = 2
	exCodedFramesX    = 3 // video: coded frames without composition time
	exMetadata        = 4 // video: AMF metadata; audio: multichannel configuration
	exMPEG2TSSeqStart = 5 // video only; audio 5 is multitrack
	exVideoMultitrack = 6
	exModEx           = 7
	exAudioMultitrack = 5
	frameTypeKey      = 1
	frameTypeCommand  = 5
)

var legacyVideoNames = map[byte]string{
	2: "Sorenson H.263", 3: "Screen video", 4: "On2 VP6", 5: "On2 VP6 with alpha", 6: "Screen video 2", 13: "AV1 (legacy id 13)",
}

var legacySoundNames = map[byte]string{
	0: "PCM", 1: "ADPCM", 3: "PCM little-endian", 4: "Nellymoser 16 kHz", 5: "Nellymoser 8 kHz", 6: "Nellymoser",
	7: "G.711 A-law", 8: "G.711 mu-law", 11: "Speex", 15: "device-specific sound",
}

// int24 reads a signed 24-bit big-endian integer (the composition time offset).
func int24(b []byte) int32 {
	return int32(uint32(b[0])<<24|uint32(b[1])<<16|uint32(b[2])<<8) >> 8
}

func appendInt24(dst []byte, v int32) []byte {
	return append(dst, byte(v>>16), byte(v>>8), byte(v))
}
