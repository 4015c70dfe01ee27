package flv

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"slices"
	"testing"
	"testing/iotest"
)

// flvHeader is a file header (audio and video) and PreviousTagSize0.
var flvHeader = []byte{'F', 'L', 'V', 1, 5, 0, 0, 0, 9, 0, 0, 0, 0}

// tagHeader is the 11-byte header of a video tag declaring n body bytes.
func tagHeader(n int) []byte {
	return []byte{byte(TagVideo), byte(n >> 16), byte(n >> 8), byte(n), 0, 0, 40, 0, 0, 0, 0}
}

// fileReaderCases are FLV streams cut or oversized, shared with the fuzz seeds.
var fileReaderCases = []struct {
	name  string
	in    []byte
	max   int // FileReader.MaxTagSize
	sizes []int
	err   error
}{
	{name: "two tags, last PreviousTagSize missing", in: cat(flvHeader, tagHeader(3), []byte{1, 2, 3}, []byte{0, 0, 0, 14},
		tagHeader(1), []byte{9}), sizes: []int{3, 1}, err: io.EOF},
	{name: "declares 16 MiB-1, over the default cap", in: cat(flvHeader, tagHeader(1<<24-1), []byte{1, 2, 3}), err: ErrTooLarge},
	{name: "declares one byte over the default cap", in: cat(flvHeader, tagHeader(DefaultMaxTagSize+1)), err: ErrTooLarge},
	{name: "declares the cap, sends 3 bytes", in: cat(flvHeader, tagHeader(DefaultMaxTagSize), []byte{1, 2, 3}), err: io.ErrUnexpectedEOF},
	{name: "a lower cap", in: cat(flvHeader, tagHeader(100), make([]byte, 104)), max: 99, err: ErrTooLarge},
	{name: "a lower cap, tag at it", in: cat(flvHeader, tagHeader(99), make([]byte, 103)), max: 99, sizes: []int{99}, err: io.EOF},
	{name: "body cut", in: cat(flvHeader, tagHeader(200), make([]byte, 150)), err: io.ErrUnexpectedEOF},
}

func TestFileReaderSizes(t *testing.T) {
	for _, tc := range fileReaderCases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewFileReader(iotest.HalfReader(bytes.NewReader(tc.in)))
			if err != nil {
				t.Fatal(err)
			}
			r.MaxTagSize = tc.max
			var sizes []int
			for {
				tag, err := r.ReadTag()
				if err != nil {
					if !errors.Is(err, tc.err) {
						t.Fatalf("err %v, want %v", err, tc.err)
					}
					break
				}
				sizes = append(sizes, len(tag.Body))
			}
			if !slices.Equal(sizes, tc.sizes) {
				t.Fatalf("tags of %v bytes, want %v", sizes, tc.sizes)
			}
		})
	}
}

// TestFileReaderMemoryFollowsBytes: a tag that declares 8 MiB and sends 3 bytes costs the
// first buffer, not 8 MiB; a 5 MiB tag sent in pieces comes out whole.
func TestFileReaderMemoryFollowsBytes(t *testing.T) {
	in := cat(flvHeader, tagHeader(DefaultMaxTagSize), []byte{1, 2, 3})
	r, err := NewFileReader(bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	if _, err := r.ReadTag(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err %v", err)
	}
	runtime.ReadMemStats(&m1)
	if got := m1.TotalAlloc - m0.TotalAlloc; got > 2*firstTagBuffer {
		t.Fatalf("a tag declaring 8 MiB with 3 bytes sent allocated %d bytes, over %d", got, 2*firstTagBuffer)
	}

	body := make([]byte, 5<<20)
	for i := range body {
		body[i] = byte(i * 7)
	}
	in = cat(flvHeader, tagHeader(len(body)), body, []byte{0, 0x50, 0, 11})
	r, err = NewFileReader(iotest.HalfReader(bytes.NewReader(in)))
	if err != nil {
		t.Fatal(err)
	}
	tag, err := r.ReadTag()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(tag.Body, body) || cap(tag.Body) != len(body) || tag.Timestamp != 40 {
		t.Fatalf("5 MiB tag: %d bytes (cap %d), equal %v, ts %d", len(tag.Body), cap(tag.Body), bytes.Equal(tag.Body, body), tag.Timestamp)
	}
	if _, err := r.ReadTag(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last tag: %v", err)
	}
}

// FuzzFileReader reads arbitrary bytes as an FLV stream: no panic, no tag larger than its
// input or the cap.
func FuzzFileReader(f *testing.F) {
	for _, tc := range fileReaderCases {
		f.Add(tc.in, uint16(tc.max))
	}
	f.Fuzz(func(t *testing.T, data []byte, maxSize uint16) {
		r, err := NewFileReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		r.MaxTagSize = int(maxSize)
		for {
			tag, err := r.ReadTag()
			if err != nil {
				return
			}
			if len(tag.Body) > len(data) || (maxSize > 0 && len(tag.Body) > int(maxSize)) {
				t.Fatalf("tag of %d bytes from %d bytes of input, cap %d", len(tag.Body), len(data), maxSize)
			}
		}
	})
}
