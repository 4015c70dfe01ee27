package flv

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
)

const (
	fileHeaderSize = 9
	tagHeaderSize  = 11
	// maxTagBody is the largest body the 24-bit DataSize field describes.
	maxTagBody = 1<<24 - 1
)

// FileWriter writes an FLV file: the header, an onMetaData tag, the sequence headers, then one
// tag per access unit, each followed by its PreviousTagSize. Timestamps start at 0 with the
// first access unit. Each tag is one Write call. The onMetaData holds room for the duration,
// size and key frame index, which MetaData gives once the file is finished. A FileWriter is
// not safe for concurrent use.
type FileWriter struct {
	w     io.Writer
	p     *Packetizer
	buf   []byte
	based bool
	base  int64

	n     int64 // bytes written
	meta  *fileMeta
	first int64 // offset of the first media tag
	index KeyframeIndex
	video int     // ID of the indexed video track, -1 without video
	last  []int64 // by track ID: timestamp of its last tag in ms, -1 before one
	step  []int64 // by track ID: the last difference between two of its timestamps
}

// NewFileWriter writes the file header, onMetaData and the sequence headers of the tracks.
func NewFileWriter(w io.Writer, tracks []media.Track) (*FileWriter, error) {
	p, err := NewPacketizer(tracks)
	if err != nil {
		return nil, err
	}
	f := &FileWriter{w: w, p: p, meta: newFileMeta(tracks), video: -1}
	for _, t := range tracks {
		if t.ID < 0 || t.ID > 1<<10 {
			return nil, fmt.Errorf("flv: track ID %d out of range", t.ID)
		}
		for len(f.last) <= t.ID {
			f.last, f.step = append(f.last, -1), append(f.step, 0)
		}
		if t.Codec.IsVideo() && f.video < 0 {
			f.video = t.ID
		}
	}
	var flags byte
	for _, t := range tracks {
		if t.Codec.IsVideo() {
			flags |= 0x01
		} else {
			flags |= 0x04
		}
	}
	// The header, then PreviousTagSize0.
	f.buf = append(f.buf[:0], 'F', 'L', 'V', 1, flags, 0, 0, 0, fileHeaderSize, 0, 0, 0, 0)
	if _, err := w.Write(f.buf); err != nil {
		return nil, fmt.Errorf("flv: write file header: %w", err)
	}
	f.n = int64(len(f.buf))
	seq, err := p.SequenceHeaders(0)
	if err != nil {
		return nil, err
	}
	f.first = int64(len(f.buf)) + tagHeaderSize + int64(len(f.meta.body)) + 4
	for _, t := range seq {
		f.first += tagHeaderSize + int64(len(t.Body)) + 4
	}
	f.meta.fill(0, 0, &f.index, f.first)
	if err := f.WriteTag(Tag{Type: TagScript, Body: f.meta.body}); err != nil {
		return nil, err
	}
	for _, t := range seq {
		if err := f.WriteTag(t); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// MetaData returns the onMetaData body of the file as written so far, with its duration, size
// and key frame index, and the file offset of that body: written there over the one written
// at the start (same length, same structure), it finishes the file.
func (f *FileWriter) MetaData() (off int64, body []byte) {
	var d int64
	for i, last := range f.last {
		if last >= 0 {
			d = max(d, last+f.step[i])
		}
	}
	f.meta.fill(time.Duration(d)*time.Millisecond, f.n, &f.index, f.first)
	return fileHeaderSize + 4 + tagHeaderSize, f.meta.body
}

// Size returns the bytes written.
func (f *FileWriter) Size() int64 { return f.n }

// WriteAccessUnit writes the tag of one access unit, timed from the first unit's DTS (units
// before it are clamped to 0).
func (f *FileWriter) WriteAccessUnit(au *media.AccessUnit) error {
	trk, err := f.p.track(au)
	if err != nil {
		return err
	}
	ms := media.Rescale(au.DTS, trk.ClockRate, 1000)
	if !f.based {
		f.based, f.base = true, ms
	}
	ts := max(ms-f.base, 0)
	typ, buf, err := appendUnit(append(f.buf[:0], make([]byte, tagHeaderSize)...), trk, au)
	if err != nil {
		return err
	}
	f.buf = buf
	at := f.n
	if err := f.flush(typ, uint32(ts)); err != nil {
		return err
	}
	if id := au.Track; id >= 0 && id < len(f.last) {
		if f.last[id] >= 0 && ts > f.last[id] {
			f.step[id] = ts - f.last[id]
		}
		f.last[id] = max(f.last[id], ts)
		if id == f.video && au.Key {
			f.index.Add(uint32(ts), at)
		}
	}
	return nil
}

// WriteTag writes one tag as it is.
func (f *FileWriter) WriteTag(t Tag) error {
	f.buf = append(f.buf[:0], make([]byte, tagHeaderSize)...)
	f.buf = append(f.buf, t.Body...)
	return f.flush(t.Type, t.Timestamp)
}

// flush fills in the header of the tag in f.buf, appends its PreviousTagSize and writes it.
func (f *FileWriter) flush(typ TagType, ts uint32) error {
	n := len(f.buf) - tagHeaderSize
	if n > maxTagBody {
		return fmt.Errorf("flv: tag body of %d bytes exceeds %d", n, maxTagBody)
	}
	putTagHeader(f.buf, typ, n, ts)
	f.buf = binary.BigEndian.AppendUint32(f.buf, uint32(tagHeaderSize+n))
	if _, err := f.w.Write(f.buf); err != nil {
		return fmt.Errorf("flv: write %d-byte tag: %w", len(f.buf), err)
	}
	f.n += int64(len(f.buf))
	return nil
}

// putTagHeader writes an 11-byte tag header: type, 24-bit size, 24-bit timestamp and its
// upper 8 bits, stream id 0.
func putTagHeader(b []byte, typ TagType, size int, ts uint32) {
	b[0] = byte(typ)
	b[1], b[2], b[3] = byte(size>>16), byte(size>>8), byte(size)
	b[4], b[5], b[6], b[7] = byte(ts>>16), byte(ts>>8), byte(ts), byte(ts>>24)
	b[8], b[9], b[10] = 0, 0, 0
}
