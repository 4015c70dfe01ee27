package avi

import (
	"fmt"
	"io"
)

// finishSegment writes the current segment's ix## indexes at the end of its movi list, the
// idx1 after it in the first RIFF, and patches the list sizes and the super indexes.
func (w *Writer) finishSegment() error {
	movi := w.moviStart
	for i, s := range w.streams {
		if s.segCount == 0 {
			continue
		}
		if len(s.super) >= w.lay.streams[i].indxCap {
			return fmt.Errorf("avi: stream %d: %w: room for %d", i, ErrTooLarge, w.lay.streams[i].indxCap)
		}
		var n uint32
		w.ibuf, n = appendStdIndex(w.ibuf[:0], i, s.id, w.segStart, w.seg)
		if err := w.append(w.ibuf); err != nil {
			return err
		}
		s.super = append(s.super, superEntry{off: w.pos - int64(len(w.ibuf)), size: uint32(len(w.ibuf)), dur: n})
		if w.first {
			s.firstCount = s.segCount
		}
		s.segCount = 0
	}
	moviEnd := w.pos
	if w.first {
		w.ibuf = appendIdx1(w.ibuf[:0], w.ids, movi+chunkHeaderSize, w.seg)
		if err := w.append(w.ibuf); err != nil {
			return err
		}
	}
	var b [4]byte
	putLE32(b[:], uint32(moviEnd-movi-chunkHeaderSize))
	if err := writeAt(w.w, movi+4, b[:]); err != nil {
		return err
	}
	putLE32(b[:], uint32(w.pos-w.segStart-chunkHeaderSize))
	if err := writeAt(w.w, w.segStart+4, b[:]); err != nil {
		return err
	}
	for i, s := range w.streams {
		w.ibuf = appendSuperIndex(w.ibuf[:0], s.id, s.super)
		if err := writeAt(w.w, w.lay.streams[i].indx, w.ibuf); err != nil {
			return err
		}
	}
	if _, err := w.w.Seek(w.pos, io.SeekStart); err != nil {
		return fmt.Errorf("avi: seek to %d: %w", w.pos, err)
	}
	w.seg = w.seg[:0]
	return nil
}

// nextSegment ends the current RIFF segment and starts an AVIX one.
func (w *Writer) nextSegment() error {
	if err := w.finishSegment(); err != nil {
		return err
	}
	b, _ := beginList(w.ibuf[:0], fccRIFF, fccAVIX)
	b, _ = beginList(b, fccLIST, fccMovi)
	w.ibuf = b
	start := w.pos
	if err := w.append(b); err != nil {
		return err
	}
	w.segStart, w.moviStart, w.first = start, start+listHeaderSize, false
	return nil
}

// append writes b at the end of the file.
func (w *Writer) append(b []byte) error {
	if _, err := w.w.Write(b); err != nil {
		return fmt.Errorf("avi: write %d bytes at %d: %w", len(b), w.pos, err)
	}
	w.pos += int64(len(b))
	return nil
}
