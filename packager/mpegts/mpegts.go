// Package mpegts reads and writes MPEG transport streams (ISO/IEC 13818-1) carrying H.264,
// H.265, AAC (ADTS), MP3 and Opus, in terms of media tracks and access units.
//
// The Demuxer normalises at ingest: DTS always present, parameter sets captured and prepended
// to key frames, access unit delimiters dropped, one access unit per audio frame. The Muxer
// writes what players and ffmpeg expect: PAT/PMT repeated, PCR on the video PID, AUDs, ADTS.
package mpegts

// PacketSize is the size of one transport stream packet in bytes.
const PacketSize = 188

// MaxPESSize caps the size of one PES packet (one video access unit), 8 MiB in bytes; larger
// ones are dropped, counted in Stats.DroppedPES, and the stream resynchronises at its next
// PES start. The largest access unit of a live stream is a key frame: at 50 Mbit/s with a 2 s
// GOP whose key frame is a quarter of its bits, about 3 MiB; 8 MiB is more than twice that.
const MaxPESSize = 8 << 20

// maxHeldPES caps the reassembly buffers of one Demuxer, all streams together (16 MiB,
// bytes of capacity): a key frame in progress and the audio beside it fit many times over,
// while a hostile input cannot make every stream hold MaxPESSize. The PES whose growth passes
// it is dropped like one over MaxPESSize, and its buffer released.
const maxHeldPES = 16 << 20

// maxStreams caps the elementary streams followed per program.
const maxStreams = 8

const (
	syncByte = 0x47
	pidPAT   = 0x0000
	pidNull  = 0x1fff

	tableIDPAT = 0x00
	tableIDPMT = 0x02

	// The longest PSI section: section_length is at most 1021 (ISO/IEC 13818-1 2.4.4.10).
	maxSectionSize = 1024
)

// Stream types of the PMT (ISO/IEC 13818-1 table 2-34).
const (
	streamTypeMPEG1Audio = 0x03
	streamTypeMPEG2Audio = 0x04
	streamTypePrivate    = 0x06 // PES private data; Opus is identified by a registration descriptor
	streamTypeAAC        = 0x0f // AAC in ADTS
	streamTypeH264       = 0x1b
	streamTypeH265       = 0x24
)

// PES stream IDs.
const (
	streamIDPrivate1 = 0xbd
	streamIDAudio    = 0xc0
	streamIDVideo    = 0xe0
)

// Descriptor tags and values for Opus in MPEG-TS (ETSI TS 102 366 style registration).
const (
	descTagRegistration = 0x05
	descTagExtension    = 0x7f
	descExtTagOpus      = 0x80
	opusFormatID        = "Opus"
)

// clock90k is the MPEG-TS system timestamp rate.
const clock90k = 90000
