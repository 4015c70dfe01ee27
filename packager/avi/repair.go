package avi

import (
	"fmt"
	"os"
	"time"
)

// Repair makes an AVI file written by a Writer that was never closed (the process killed, the
// power lost) readable in full: it truncates the file after its last whole data chunk,
// rebuilds the indexes (ix## for every RIFF segment, at the end of the last movi list, and the
// legacy idx1 when the file has one segment), and patches every list size, stream length and
// super index. It returns the duration of the media kept. A file that was closed comes out
// equivalent. f must be open for reading and writing; it is not closed.
func Repair(f *os.File) (time.Duration, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("avi: repair: %w", err)
	}
	size := st.Size()
	lay, tot, movi, err := readLayout(f, size)
	if err != nil {
		return 0, fmt.Errorf("avi: repair %s: %w", f.Name(), err)
	}
	res, err := scanMovi(f, size, movi, &lay)
	if err != nil {
		return 0, fmt.Errorf("avi: repair %s: %w", f.Name(), err)
	}
	last := 0
	for k, sg := range res.segs {
		if sg.riff < res.end {
			last = k
		}
	}
	segs := res.segs[:last+1]
	if err := f.Truncate(res.end); err != nil {
		return 0, fmt.Errorf("avi: repair %s: truncate to %d: %w", f.Name(), res.end, err)
	}

	// Indexes of every segment, at the end of the last movi list.
	pos := res.end
	var buf []byte
	for k, sg := range segs {
		hi := len(res.entries)
		if k < last {
			hi = segs[k+1].first
		}
		for i, sl := range lay.streams {
			var n uint32
			buf, n = appendStdIndex(buf[:0], i, sl.id, sg.riff, res.entries[sg.first:hi])
			if n == 0 {
				continue
			}
			if err := writeAt(f, pos, buf); err != nil {
				return 0, err
			}
			tot[i].super = append(tot[i].super, superEntry{off: pos, size: uint32(len(buf)), dur: n})
			pos += int64(len(buf))
		}
	}
	moviEnd := pos
	if last == 0 {
		ids := make([]fourCC, len(lay.streams))
		for i, sl := range lay.streams {
			ids[i] = sl.id
		}
		buf = appendIdx1(buf[:0], ids, segs[0].movi+chunkHeaderSize, res.entries)
		if err := writeAt(f, pos, buf); err != nil {
			return 0, err
		}
		pos += int64(len(buf))
	}

	// List sizes: each earlier segment ends where the next starts; its movi list before idx1.
	var b [4]byte
	for k, sg := range segs {
		mEnd, rEnd := moviEnd, pos
		if k < last {
			rEnd = segs[k+1].riff
			mEnd = rEnd
			if sg.idx1 > sg.movi {
				mEnd = sg.idx1
			}
		}
		putLE32(b[:], uint32(mEnd-sg.movi-chunkHeaderSize))
		if err := writeAt(f, sg.movi+4, b[:]); err != nil {
			return 0, err
		}
		putLE32(b[:], uint32(rEnd-sg.riff-chunkHeaderSize))
		if err := writeAt(f, sg.riff+4, b[:]); err != nil {
			return 0, err
		}
	}

	firstEnd := len(res.entries)
	if len(segs) > 1 {
		firstEnd = segs[1].first
	}
	for j, e := range res.entries {
		t := &tot[e.stream]
		t.count++
		t.bytes += int64(e.size)
		t.maxChunk = max(t.maxChunk, e.size)
		if j < firstEnd {
			t.firstCount++
		}
	}
	if err := lay.patchHeader(f, tot, pos, buf); err != nil {
		return 0, fmt.Errorf("avi: repair %s: %w", f.Name(), err)
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("avi: repair %s: sync: %w", f.Name(), err)
	}
	var d float64
	for _, t := range tot {
		d = max(d, chunkSeconds(t, t.count))
	}
	return time.Duration(d * float64(time.Second)), nil
}
