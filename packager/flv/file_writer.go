package flv

import (
	"encoding/binary"
	"fmt"
	"io"

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
// first access unit. Each tag is one Write call. A FileWriter is not safe for concurrent use.
type FileWriter struct {
	w     io.Writer
	p     *Packetizer
	buf   []byte
	based bool
	base  int64
}

// NewFileWriter writes the file header, onMetaData and the sequence headers of the tracks.
func NewFileWriter(w io.Writer, tracks []media.Track) (*FileWriter, error) {
	p, err := NewPacketizer(tracks)
	if err != nil {
		return nil, err
	}
	f := &FileWriter{w: w, p: p}
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
	if err := f.WriteTag(Tag{Type: TagScript, Body: appendMetaData(nil, tracks)}); err != nil {
		return nil, err
	}
	seq, err := p.SequenceHeaders(0)
	if err != nil {
		return nil, err
	}
	for _, t := range seq {
		if err := f.WriteTag(t); err != nil {
			return nil, err
		}
	}
	return f, nil
}

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
	return f.flush(typ, uint32(ts))
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
