package flv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Tag size limits of the FileReader.
const (
	// DefaultMaxTagSize caps the body a tag may declare (8 MiB, bytes) unless
	// FileReader.MaxTagSize says otherwise. The largest tag of a live stream is a key frame:
	// at 50 Mbit/s with a 2 s GOP whose key frame is a quarter of its bits, about 3 MiB;
	// 8 MiB is more than twice that. (The field itself can declare up to 16 MiB.)
	DefaultMaxTagSize = 8 << 20
	// firstTagBuffer is the most a tag body's buffer holds before its bytes arrive (64 KiB);
	// past it the buffer doubles as bytes come, so memory follows what the peer sent, not
	// what it declared.
	firstTagBuffer = 64 << 10
)

// FileReader reads the tags of an FLV file or HTTP-FLV stream.
type FileReader struct {
	r   io.Reader
	hdr [tagHeaderSize]byte
	// HasAudio and HasVideo are the header's flags (see Depacketizer.Expect).
	HasAudio, HasVideo bool
	// MaxTagSize caps the body size a tag may declare, in bytes; a larger one fails ReadTag
	// with ErrTooLarge. Default (0) DefaultMaxTagSize.
	MaxTagSize int
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
	if limit := f.maxTagSize(); n > limit {
		return Tag{}, fmt.Errorf("flv: tag of %d bytes over %d: %w", n, limit, ErrTooLarge)
	}
	body, err := readGrowing(f.r, n)
	if err != nil {
		return Tag{}, fmt.Errorf("flv: read %d-byte tag body: %w", n, noEOF(err))
	}
	// The PreviousTagSize that follows; the last one of a file may be missing.
	if _, err := io.ReadFull(f.r, f.hdr[:4]); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return Tag{}, fmt.Errorf("flv: read PreviousTagSize: %w", err)
	}
	return Tag{
		Type:      TagType(h[0] & 0x1f),
		Timestamp: uint32(h[7])<<24 | uint32(h[4])<<16 | uint32(h[5])<<8 | uint32(h[6]),
		Body:      body,
	}, nil
}

func (f *FileReader) maxTagSize() int {
	if f.MaxTagSize > 0 {
		return f.MaxTagSize
	}
	return DefaultMaxTagSize
}

// readGrowing reads n bytes into a buffer of exactly n bytes that is allocated as they come:
// firstTagBuffer at first, then doubling, so a declared size costs at most twice what
// arrived (and firstTagBuffer).
func readGrowing(r io.Reader, n int) ([]byte, error) {
	buf := make([]byte, 0, min(n, firstTagBuffer))
	for len(buf) < n {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(n, 2*cap(buf)))
			copy(grown, buf)
			buf = grown
		}
		start := len(buf)
		m, err := io.ReadFull(r, buf[start:cap(buf)])
		buf = buf[:start+m]
		if err != nil {
			return nil, err
		}
	}
	return buf[:n:n], nil
}

func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
