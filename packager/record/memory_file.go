package record

import (
	"cmp"
	"errors"
	"io"
	"slices"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/fmp4"
)

// MemoryFile is what a Memory held when it was opened, read as one fragmented MP4 file that
// starts at time zero: the init segment, its durations stated in mvhd, mehd, tkhd and mdhd,
// then the fragments (the open one, a GOP at most, is not included). It shares the fragments'
// bytes with the Memory instead of copying them, and moves each fragment's decode times when
// it is read; it holds a copy of one moof at a time. It keeps the fragments it holds alive
// after the Memory lets them go, until it is no longer referenced. One goroutine reads it.
type MemoryFile struct {
	init   []byte // ftyp + moov, durations patched
	frags  []fileFrag
	size   int64
	tracks []media.Track
	start  time.Duration // what every decode time moves back by
	off    int64

	// moof is the moof of frags[cur] with its decode times moved; cur is -1 before the first.
	cur  int
	moof []byte
}

// fileFrag is a fragment of a MemoryFile: its bytes, shared with the Memory, at offset at.
type fileFrag struct {
	data []byte
	at   int64
	moof int
}

var _ io.ReadSeeker = (*MemoryFile)(nil)

// Open returns what is held now as a MemoryFile, or nil when nothing is held. The Memory goes
// on writing and evicting meanwhile; the file does not change.
func (m *Memory) Open() *MemoryFile {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.frags) == 0 {
		return nil
	}
	f := &MemoryFile{init: slices.Clone(m.init.Data), frags: make([]fileFrag, len(m.frags)), tracks: m.kept, cur: -1}
	at := int64(len(f.init))
	ends := make([]int64, len(m.kept))
	start := time.Duration(-1)
	for i, fr := range m.frags {
		f.frags[i] = fileFrag{data: fr.data, at: at, moof: fr.moof}
		at += int64(len(fr.data))
		for j, e := range fr.ends {
			if j < len(ends) {
				ends[j] = max(ends[j], e)
			}
		}
		if fr.first >= 0 && (start < 0 || fr.first < start) {
			start = fr.first
		}
	}
	f.size, f.start = at, max(start, 0)
	m.init.Apply(f.init, trackDurations(m.kept, ends, f.start))
	return f
}

// Size returns the file's length in bytes.
func (f *MemoryFile) Size() int64 { return f.size }

// Read implements io.Reader.
func (f *MemoryFile) Read(p []byte) (int, error) {
	if f.off >= f.size {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && f.off < f.size {
		k := f.copyAt(p[n:], f.off)
		n += k
		f.off += int64(k)
	}
	return n, nil
}

// Seek implements io.Seeker.
func (f *MemoryFile) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		offset += f.off
	case io.SeekEnd:
		offset += f.size
	case io.SeekStart:
	default:
		return f.off, errors.New("record: memory file: seek: invalid whence")
	}
	if offset < 0 {
		return f.off, errors.New("record: memory file: seek before the start")
	}
	f.off = offset
	return offset, nil
}

// copyAt copies into p from off (within the file) up to the end of the part off is in: the
// init segment, a fragment's moof, or the rest of that fragment. It returns the bytes copied.
func (f *MemoryFile) copyAt(p []byte, off int64) int {
	if off < int64(len(f.init)) {
		return copy(p, f.init[off:])
	}
	i, found := slices.BinarySearchFunc(f.frags, off, func(fr fileFrag, off int64) int {
		return cmp.Compare(fr.at, off)
	})
	if !found {
		i-- // off is inside frags[i-1]
	}
	fr := f.frags[i]
	rel := int(off - fr.at)
	if rel >= fr.moof {
		return copy(p, fr.data[rel:])
	}
	if f.cur != i {
		f.moof = append(f.moof[:0], fr.data[:fr.moof]...)
		if f.start > 0 {
			shiftDecodeTimes(f.moof, f.tracks, f.start)
		}
		f.cur = i
	}
	return copy(p, f.moof[rel:])
}

// moofEnd returns where the last moof box of data (a sequence of boxes) ends: the part of a
// fragment that holds its decode times.
func moofEnd(data []byte) int {
	end := 0
	for off := 0; off < len(data); {
		bx, err := fmp4.NextBox(data, off)
		if err != nil {
			break
		}
		if bx.Type == "moof" {
			end = bx.End
		}
		off = bx.End
	}
	return end
}
