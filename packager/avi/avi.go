// Package avi writes AVI files from access units, progressively, with OpenDML (AVI 2.0)
// extensions for files beyond the 1 GiB RIFF limit, and repairs files cut by a crash.
//
// Layout: RIFF 'AVI ' { LIST hdrl { avih, LIST strl { strh, strf, indx }..., LIST odml { dmlh } },
// LIST movi { ##dc/##wb chunks..., ix## }, idx1 }, then RIFF 'AVIX' { LIST movi { ... } }....
// Every number is little-endian; every chunk is padded to an even size.
package avi

import "encoding/binary"

// fourCC is a RIFF chunk identifier.
type fourCC [4]byte

// RIFF identifiers.
var (
	fccRIFF = fourCC{'R', 'I', 'F', 'F'}
	fccLIST = fourCC{'L', 'I', 'S', 'T'}
	fccAVI  = fourCC{'A', 'V', 'I', ' '}
	fccAVIX = fourCC{'A', 'V', 'I', 'X'}
	fccHdrl = fourCC{'h', 'd', 'r', 'l'}
	fccAvih = fourCC{'a', 'v', 'i', 'h'}
	fccStrl = fourCC{'s', 't', 'r', 'l'}
	fccStrh = fourCC{'s', 't', 'r', 'h'}
	fccStrf = fourCC{'s', 't', 'r', 'f'}
	fccIndx = fourCC{'i', 'n', 'd', 'x'}
	fccOdml = fourCC{'o', 'd', 'm', 'l'}
	fccDmlh = fourCC{'d', 'm', 'l', 'h'}
	fccMovi = fourCC{'m', 'o', 'v', 'i'}
	fccIdx1 = fourCC{'i', 'd', 'x', '1'}
	fccJUNK = fourCC{'J', 'U', 'N', 'K'}
	fccVids = fourCC{'v', 'i', 'd', 's'}
	fccAuds = fourCC{'a', 'u', 'd', 's'}
	fccH264 = fourCC{'H', '2', '6', '4'}
	// fccH265 tags H.265: the code ffmpeg, VLC, MediaInfo and GStreamer read; fccHEVC, which
	// earlier versions wrote, GStreamer's avidemux does not know.
	fccH265 = fourCC{'H', '2', '6', '5'}
	fccHEVC = fourCC{'H', 'E', 'V', 'C'}
)

const (
	chunkHeaderSize = 8
	// listHeaderSize is a LIST or RIFF header with its type.
	listHeaderSize = 12
	// superIndexEntries is the room reserved in each stream's indx: that many RIFF segments.
	superIndexEntries = 256
	// superIndexHeader is the indx body before its entries; superIndexEntry the size of one.
	superIndexHeader = 24
	superIndexEntry  = 16
	// stdIndexHeader is the ix## body before its entries; stdIndexEntry the size of one.
	stdIndexHeader = 24
	stdIndexEntry  = 8
	// idx1Entry is the size of one legacy index entry.
	idx1Entry = 16
	// dmlhSize is the body of the OpenDML extended header, as the specification reserves it.
	dmlhSize = 248

	// avihHasIndex, avihIsInterleaved and avihTrustCKType are MainAVIHeader flags.
	avihHasIndex      = 0x10
	avihIsInterleaved = 0x100
	avihTrustCKType   = 0x800
	// idx1KeyFrame marks a key frame in idx1; stdIndexDelta a delta frame in ix##.
	idx1KeyFrame  = 0x10
	stdIndexDelta = 1 << 31
	// indexOfIndexes and indexOfChunks are the bIndexType of indx and ix##.
	indexOfIndexes = 0x00
	indexOfChunks  = 0x01

	// wave format tags of the audio codecs carried.
	waveFormatMP3 = 0x0055
	waveFormatAAC = 0x00FF
)

// Field offsets inside chunk bodies, for the values patched at Close and by Repair.
const (
	avihMicroSecPerFrame = 0
	avihMaxBytesPerSec   = 4
	avihTotalFrames      = 16
	avihSuggestedBuffer  = 28
	avihSize             = 56

	strhHandler         = 4
	strhScale           = 20
	strhRate            = 24
	strhLength          = 32
	strhSuggestedBuffer = 36
	strhSize            = 56

	strfAvgBytesPerSec = 8
)

// DefaultRIFFLimit is the size of a RIFF segment before the next AVIX one starts: 1 GiB, the
// size that readers without OpenDML support read in the first segment.
const DefaultRIFFLimit = 1 << 30

// Options tune a Writer.
type Options struct {
	// RIFFLimit is the size in bytes of a RIFF segment, indexes included, before the writer
	// starts an AVIX continuation; default DefaultRIFFLimit (1 GiB), at least 64 KiB.
	RIFFLimit int64
}

// minRIFFLimit keeps a segment larger than its header and indexes.
const minRIFFLimit = 64 << 10

// chunkID returns a stream's chunk identifier: two decimal digits and a two-letter type.
func chunkID(stream int, typ string) fourCC {
	return fourCC{byte('0' + stream/10%10), byte('0' + stream%10), typ[0], typ[1]}
}

// indexID returns the identifier of a stream's ix## standard index.
func indexID(stream int) fourCC {
	return fourCC{'i', 'x', byte('0' + stream/10%10), byte('0' + stream%10)}
}

// parseStream returns the stream number of a ##xx chunk identifier, or -1.
func parseStream(id fourCC) int {
	if id[0] < '0' || id[0] > '9' || id[1] < '0' || id[1] > '9' {
		return -1
	}
	return int(id[0]-'0')*10 + int(id[1]-'0')
}

// padded returns a chunk body size rounded up to even.
func padded(n int64) int64 { return n + n&1 }

func le16(b []byte, v uint16) []byte { return binary.LittleEndian.AppendUint16(b, v) }
func le32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }
func le64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }

func putLE32(b []byte, v uint32) { binary.LittleEndian.PutUint32(b, v) }

// appendChunkHeader appends a chunk header of size n.
func appendChunkHeader(b []byte, id fourCC, n uint32) []byte {
	return le32(append(b, id[:]...), n)
}

// beginList appends a LIST (or RIFF) header with a size to be filled by endList, and returns
// where that size is.
func beginList(b []byte, id, typ fourCC) ([]byte, int) {
	at := len(b) + 4
	b = appendChunkHeader(b, id, 0)
	return append(b, typ[:]...), at
}

// endList fills in the size of the list or chunk whose size field is at at.
func endList(b []byte, at int) {
	binary.LittleEndian.PutUint32(b[at:], uint32(len(b)-at-4))
}
