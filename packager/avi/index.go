package avi

// entry is one chunk of the movi list: where its header is in the file, its body size, its
// stream and whether it is a key frame.
type entry struct {
	off    int64
	size   uint32
	stream uint8
	key    bool
}

// superEntry is one entry of an indx super index: where an ix## chunk is, its size with its
// header, and the stream duration it covers in chunks.
type superEntry struct {
	off  int64
	size uint32
	dur  uint32
}

// appendStdIndex appends an ix## chunk of the entries of one stream, with offsets from base
// (each below 4 GiB), and returns how many it indexes.
func appendStdIndex(b []byte, stream int, id fourCC, base int64, entries []entry) ([]byte, uint32) {
	start := len(b)
	b = appendChunkHeader(b, indexID(stream), 0)
	b = le16(b, 2) // wLongsPerEntry
	b = append(b, 0, indexOfChunks)
	b = le32(b, 0) // nEntriesInUse, below
	b = append(b, id[:]...)
	b = le64(b, uint64(base))
	b = le32(b, 0)
	var n uint32
	for _, e := range entries {
		if int(e.stream) != stream {
			continue
		}
		size := e.size
		if !e.key {
			size |= stdIndexDelta
		}
		// The offset points at the chunk's body, past its header.
		b = le32(b, uint32(e.off+chunkHeaderSize-base))
		b = le32(b, size)
		n++
	}
	putLE32(b[start+4:], uint32(len(b)-start-chunkHeaderSize))
	putLE32(b[start+chunkHeaderSize+4:], n)
	return b, n
}

// appendIdx1 appends the legacy index of the first RIFF segment; offsets count from the
// 'movi' type of the list, at movi.
func appendIdx1(b []byte, ids []fourCC, movi int64, entries []entry) []byte {
	b = appendChunkHeader(b, fccIdx1, uint32(len(entries)*idx1Entry))
	for _, e := range entries {
		var flags uint32
		if e.key {
			flags = idx1KeyFrame
		}
		b = append(b, ids[e.stream][:]...)
		b = le32(b, flags)
		b = le32(b, uint32(e.off-movi))
		b = le32(b, e.size)
	}
	return b
}

// indexBytes bounds the size of the indexes of a segment of n chunks.
func indexBytes(n, streams int, first bool) int64 {
	size := int64(n)*stdIndexEntry + int64(streams)*(chunkHeaderSize+stdIndexHeader)
	if first {
		size += chunkHeaderSize + int64(n)*idx1Entry
	}
	return size
}
