package flv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// FileReader reads the tags of an FLV file or HTTP-FLV stream.
type FileReader struct {
	r   io.Reader
	hdr [tagHeaderSize]byte
	// HasAudio and HasVideo are the header's flags (see Depacketizer.Expect).
	HasAudio, HasVideo bool
}

// NewFileReader reads and checks the file header.
func NewFileReader(r io.Reader) (*FileReader, error) {
	var h [fileHeaderSize]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, fmt.Errorf("flv: read file header: %w", err)
	}
	if h[0] != 'F' || h[1] != 'L' || h[2] != 'V' {
		return nil, fmt.Errorf("flv: file starts with % x, not FLV: %w", h[:3], ErrMalformed)
	}
	off := binary.BigEndian.Uint32(h[5:])
	if off < fileHeaderSize || off > 1<<16 {
		return nil, fmt.Errorf("flv: header size %d: %w", off, ErrMalformed)
	}
	// Skip the rest of the header and PreviousTagSize0.
	if _, err := io.CopyN(io.Discard, r, int64(off-fileHeaderSize)+4); err != nil {
		return nil, fmt.Errorf("flv: read file header: %w", err)
	}
	return &FileReader{r: r, HasAudio: h[4]&0x04 != 0, HasVideo: h[4]&0x01 != 0}, nil
}

// ReadTag returns the next tag, its body freshly allocated (it may go to a Depacketizer). It
// returns io.EOF at the end of the file and io.ErrUnexpectedEOF inside a tag.
func (f *FileReader) ReadTag() (Tag, error) {
	if _, err := io.ReadFull(f.r, f.hdr[:]); err != nil {
		return Tag{}, err
	}
	h := f.hdr
	if h[0]&0x20 != 0 {
		return Tag{}, fmt.Errorf("flv: encrypted tag (filter bit): %w", ErrUnsupportedCodec)
	}
	n := int(h[1])<<16 | int(h[2])<<8 | int(h[3])
	t := Tag{
		Type:      TagType(h[0] & 0x1f),
		Timestamp: uint32(h[7])<<24 | uint32(h[4])<<16 | uint32(h[5])<<8 | uint32(h[6]),
		Body:      make([]byte, n+4),
	}
	if m, err := io.ReadFull(f.r, t.Body); err != nil && m < n { // the last PreviousTagSize may be missing
		return Tag{}, fmt.Errorf("flv: read %d-byte tag body: %w", n, noEOF(err))
	}
	t.Body = t.Body[:n:n]
	return t, nil
}

func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
