package avi

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/nal"
)

// maxHeaderList bounds the hdrl list Repair reads into memory.
const maxHeaderList = 1 << 20

// keyProbeBytes is how much of a video chunk Repair reads to tell a key frame.
const keyProbeBytes = 1024

// segmentInfo is one RIFF segment found by the scanner: where its RIFF and movi lists start,
// where its idx1 is (-1: none) and its first entry.
type segmentInfo struct {
	riff, movi, idx1 int64
	first            int
}

// scanResult is what a scan of the movi lists found: the whole data chunks in file order, the
// segments, and where the last whole data chunk ends.
type scanResult struct {
	entries []entry
	segs    []segmentInfo
	end     int64
}

// readLayout parses the header of an AVI file of size bytes: the hdrl list and where the
// first movi list starts. It reads at most maxHeaderList bytes of header.
func readLayout(r io.ReaderAt, size int64) (layout, []totals, int64, error) {
	var lay layout
	var h [listHeaderSize]byte
	if size < listHeaderSize {
		return lay, nil, 0, fmt.Errorf("%w: %d bytes", ErrNotAVI, size)
	}
	if _, err := r.ReadAt(h[:], 0); err != nil {
		return lay, nil, 0, fmt.Errorf("avi: read RIFF header: %w", err)
	}
	if fourCC(h[0:4]) != fccRIFF || fourCC(h[8:12]) != fccAVI {
		return lay, nil, 0, fmt.Errorf("%w: starts with %q", ErrNotAVI, h[:])
	}
	lay.avih, lay.dmlh = -1, -1
	var tot []totals
	movi := int64(-1)
	// Top-level chunks of the first RIFF, up to the movi list; their sizes are final.
	for p := int64(listHeaderSize); p+listHeaderSize <= size; {
		if _, err := r.ReadAt(h[:], p); err != nil {
			return lay, nil, 0, fmt.Errorf("avi: read chunk at %d: %w", p, err)
		}
		id, n := fourCC(h[0:4]), int64(binary.LittleEndian.Uint32(h[4:8]))
		if id == fccLIST && fourCC(h[8:12]) == fccMovi {
			movi = p
			break
		}
		if id == fccLIST && fourCC(h[8:12]) == fccHdrl {
			if n < 4 || n > maxHeaderList || p+chunkHeaderSize+n > size {
				return lay, nil, 0, fmt.Errorf("avi: hdrl list of %d bytes at %d", n, p)
			}
			body := make([]byte, n-4)
			if _, err := r.ReadAt(body, p+listHeaderSize); err != nil {
				return lay, nil, 0, fmt.Errorf("avi: read hdrl at %d: %w", p, err)
			}
			tot = parseHdrl(&lay, body, p+listHeaderSize)
		}
		p += chunkHeaderSize + padded(n)
	}
	if movi < 0 || lay.avih < 0 || len(lay.streams) == 0 {
		return lay, nil, 0, fmt.Errorf("%w: no header or no movi list", ErrNotAVI)
	}
	return lay, tot, movi, nil
}

// parseHdrl walks the hdrl list's body, found at offset base, and fills in the layout and
// each stream's rates.
func parseHdrl(lay *layout, body []byte, base int64) []totals {
	var tot []totals
	walkChunks(body, func(id fourCC, b []byte, at int) {
		switch id {
		case fccAvih:
			lay.avih = base + int64(at)
		case fccLIST:
			if len(b) < 4 {
				return
			}
			inner, off := b[4:], base+int64(at)+4
			switch fourCC(b[0:4]) {
			case fccStrl:
				sl := streamLayout{strh: -1, strf: -1, indx: -1, id: chunkID(len(lay.streams), "dc")}
				var t totals
				walkChunks(inner, func(id fourCC, c []byte, at int) {
					switch id {
					case fccStrh:
						if len(c) < strhSize {
							return
						}
						sl.strh = off + int64(at)
						sl.video, sl.audio = fourCC(c[0:4]) == fccVids, fourCC(c[0:4]) == fccAuds
						sl.handler = fourCC(c[strhHandler : strhHandler+4])
						t.scale = binary.LittleEndian.Uint32(c[strhScale:])
						t.rate = binary.LittleEndian.Uint32(c[strhRate:])
						if sl.audio {
							sl.id = chunkID(len(lay.streams), "wb")
						}
					case fccStrf:
						sl.strf = off + int64(at)
					case fccIndx:
						if len(c) >= superIndexHeader {
							sl.indx, sl.indxCap = off+int64(at), (len(c)-superIndexHeader)/superIndexEntry
						}
					}
				})
				if sl.strh >= 0 && sl.strf >= 0 && len(lay.streams) < 100 {
					lay.streams = append(lay.streams, sl)
					tot = append(tot, t)
				}
			case fccOdml:
				walkChunks(inner, func(id fourCC, c []byte, at int) {
					if id == fccDmlh && len(c) >= 4 {
						lay.dmlh = off + int64(at)
					}
				})
			}
		}
	})
	return tot
}

// walkChunks calls fn with each whole chunk of b: its identifier, its body and where the body
// starts in b.
func walkChunks(b []byte, fn func(id fourCC, body []byte, at int)) {
	for p := 0; p+chunkHeaderSize <= len(b); {
		n := int(binary.LittleEndian.Uint32(b[p+4:]))
		if n < 0 || n > len(b)-p-chunkHeaderSize {
			return
		}
		fn(fourCC(b[p:p+4]), b[p+chunkHeaderSize:p+chunkHeaderSize+n], p+chunkHeaderSize)
		p += chunkHeaderSize + n + n&1
	}
}

// scanMovi walks the movi lists from the first one, at movi, to the end of the file or the
// first chunk that is cut or unknown, without trusting the list sizes (a crash leaves them
// unpatched). Data chunks of the streams are collected, with key frames told by their NAL
// units; indexes and JUNK are stepped over; a RIFF AVIX starts the next segment.
func scanMovi(r io.ReaderAt, size, movi int64, lay *layout) (scanResult, error) {
	res := scanResult{segs: []segmentInfo{{riff: 0, movi: movi, idx1: -1}}, end: movi + listHeaderSize}
	br := bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 64<<10)
	p := movi + listHeaderSize
	if _, err := br.Discard(int(p)); err != nil {
		return res, nil
	}
	var h [listHeaderSize + listHeaderSize]byte
	for p+chunkHeaderSize <= size {
		if _, err := io.ReadFull(br, h[:chunkHeaderSize]); err != nil {
			return res, readErr(err, p)
		}
		id, n := fourCC(h[0:4]), int64(binary.LittleEndian.Uint32(h[4:8]))
		body := p + chunkHeaderSize
		if id == fccRIFF {
			if body+16 > size {
				break
			}
			if _, err := io.ReadFull(br, h[chunkHeaderSize:24]); err != nil {
				return res, readErr(err, p)
			}
			if fourCC(h[8:12]) != fccAVIX || fourCC(h[12:16]) != fccLIST || fourCC(h[20:24]) != fccMovi {
				break
			}
			res.segs = append(res.segs, segmentInfo{riff: p, movi: p + listHeaderSize, idx1: -1, first: len(res.entries)})
			p += 2 * listHeaderSize
			continue
		}
		whole := body+padded(n) <= size
		if !whole {
			break
		}
		stream := parseStream(id)
		switch {
		case stream >= 0 && stream < len(lay.streams) && isDataChunk(id):
			e := entry{off: p, size: uint32(n), stream: uint8(stream), key: true}
			if lay.streams[stream].video {
				peek, _ := br.Peek(int(min(n, keyProbeBytes)))
				e.key = isKeyFrame(lay.streams[stream].handler, peek)
			}
			res.entries = append(res.entries, e)
			res.end = body + padded(n)
		case id == fccIdx1:
			res.segs[len(res.segs)-1].idx1 = p
		case id == fccJUNK || isIndexChunk(id):
		default:
			return res, nil // not a chunk of this file: the end of what can be trusted
		}
		if _, err := br.Discard(int(padded(n))); err != nil {
			return res, readErr(err, p)
		}
		p = body + padded(n)
	}
	return res, nil
}

// readErr reports a read failure; the end of the file is not one.
func readErr(err error, at int64) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil
	}
	return fmt.Errorf("avi: read chunk at %d: %w", at, err)
}

// isKeyFrame tells whether the start of an Annex B video chunk holds a key frame, or the
// parameter sets the writer puts in front of one.
func isKeyFrame(handler fourCC, b []byte) bool {
	c := media.CodecH264
	if handler == fccH265 || handler == fccHEVC {
		c = media.CodecH265
	}
	for i := 0; i+3 < len(b); i++ {
		if b[i] != 0 || b[i+1] != 0 || b[i+2] != 1 {
			continue
		}
		switch nal.Classify(c, b[i+3:]) {
		case nal.Key, nal.SPS, nal.VPS:
			return true
		}
		i += 2
	}
	return false
}

// isDataChunk tells whether a ##xx identifier names video (dc, db) or audio (wb) data.
func isDataChunk(id fourCC) bool {
	t := string(id[2:])
	return t == "dc" || t == "db" || t == "wb"
}

// isIndexChunk tells whether an identifier is an ix## standard index.
func isIndexChunk(id fourCC) bool {
	return id[0] == 'i' && id[1] == 'x' && parseStream(fourCC{id[2], id[3]}) >= 0
}
