package rtmp

import (
	"encoding/binary"
	"io"
	"net"
)

// Chunk stream IDs of the messages we send, as ffmpeg numbers them.
const (
	csidControl = 2
	csidCommand = 3
	csidAudio   = 4
	csidData    = 5
	csidVideo   = 6
)

// outChunkSize is the chunk size we announce and write with: large chunks mean few headers
// and few system calls.
const outChunkSize = 65536

// chunkWriter splits messages into chunks. Each message is one type 0 chunk and type 3
// continuations, written with one vectored write that points into the body: the payload is
// not copied. It is not safe for concurrent use.
type chunkWriter struct {
	w         io.Writer
	chunkSize int
	hdrs      []byte
	iov       [][]byte
	bufs      net.Buffers
}

func newChunkWriter(w io.Writer) *chunkWriter {
	return &chunkWriter{w: w, chunkSize: defaultChunkSize}
}

// writeMessage writes one message made of the concatenated parts. csid must be below 64.
func (cw *chunkWriter) writeMessage(csid uint8, typ uint8, streamID, ts uint32, parts ...[]byte) error {
	length := 0
	for _, p := range parts {
		length += len(p)
	}
	ext := ts >= 0xffffff
	// Headers first, all in one buffer, so that the slices into it stay valid.
	chunks := max(1, (length+cw.chunkSize-1)/cw.chunkSize)
	h := cw.hdrs[:0]
	h = append(h, csid&0x3f)
	h = append(h, byte(min(ts, 0xffffff)>>16), byte(min(ts, 0xffffff)>>8), byte(min(ts, 0xffffff)))
	h = append(h, byte(length>>16), byte(length>>8), byte(length), typ)
	h = binary.LittleEndian.AppendUint32(h, streamID)
	if ext {
		h = binary.BigEndian.AppendUint32(h, ts)
	}
	first := len(h)
	for range chunks - 1 {
		h = append(h, 0xc0|csid&0x3f)
		if ext {
			h = binary.BigEndian.AppendUint32(h, ts)
		}
	}
	cw.hdrs = h
	contLen := 1
	if ext {
		contLen = 5
	}

	iov := append(cw.iov[:0], h[:first])
	room, next := cw.chunkSize, first
	for _, p := range parts {
		for len(p) > 0 {
			if room == 0 {
				iov = append(iov, h[next:next+contLen])
				next += contLen
				room = cw.chunkSize
			}
			n := min(room, len(p))
			iov = append(iov, p[:n])
			p, room = p[n:], room-n
		}
	}
	cw.iov = iov
	// WriteTo consumes cw.bufs, a second header on iov's array; cw.iov keeps the capacity.
	cw.bufs = iov
	_, err := cw.bufs.WriteTo(cw.w)
	clear(iov) // do not keep the payload alive
	return err
}
