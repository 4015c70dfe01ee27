package rtmp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Message types (RTMP specification, sections 5.4, 6 and 7.1).
const (
	msgSetChunkSize     = 1
	msgAbort            = 2
	msgAck              = 3
	msgUserControl      = 4
	msgWinAckSize       = 5
	msgSetPeerBandwidth = 6
	msgAudio            = 8
	msgVideo            = 9
	msgDataAMF3         = 15
	msgCommandAMF3      = 17
	msgDataAMF0         = 18
	msgCommandAMF0      = 20
	msgAggregate        = 22
)

// Reader limits. A message longer than maxMessageSize, or incomplete messages holding more
// than maxPendingBytes together, end the connection: memory per connection stays bounded.
const (
	defaultChunkSize = 128
	maxChunkStreams  = 32
	maxMessageSize   = 8 << 20
	maxPendingBytes  = 16 << 20
	// initialMessageBuffer is the most a message buffer holds before its bytes arrive.
	initialMessageBuffer = 64 << 10
)

// message is one complete RTMP message.
type message struct {
	Type     uint8
	StreamID uint32
	// Timestamp is in milliseconds; it wraps around after 2^32.
	Timestamp uint32
	Body      []byte
}

// chunkStream is the header state of one chunk stream ID, and the message it is assembling.
type chunkStream struct {
	timestamp  uint32
	delta      uint32
	length     uint32
	typ        uint8
	streamID   uint32
	extended   bool // the last header carried an extended timestamp
	started    bool // a header with a length was seen
	assembling bool // buf holds the start of a message
	buf        []byte
}

// chunkReader reassembles messages from the chunks of one direction of a connection. It
// applies Set Chunk Size and Abort itself and hands every message, those included, to the
// caller. It is not safe for concurrent use.
type chunkReader struct {
	r         io.Reader
	chunkSize uint32
	streams   map[uint32]*chunkStream
	pending   int
	hdr       [11]byte
}

func newChunkReader(r io.Reader) *chunkReader {
	return &chunkReader{r: r, chunkSize: defaultChunkSize, streams: make(map[uint32]*chunkStream)}
}

// readMessage reads chunks until one completes a message. The body is freshly allocated and
// owned by the caller.
func (c *chunkReader) readMessage() (message, error) {
	for {
		msg, ok, err := c.readChunk()
		if err != nil || ok {
			return msg, err
		}
	}
}

func (c *chunkReader) read(n int) ([]byte, error) {
	_, err := io.ReadFull(c.r, c.hdr[:n])
	return c.hdr[:n], err
}

func uint24(b []byte) uint32 { return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]) }

// readChunk reads one chunk; ok tells whether it completed a message.
func (c *chunkReader) readChunk() (msg message, ok bool, err error) {
	b, err := c.read(1)
	if err != nil {
		return msg, false, err
	}
	fmtType, csid := b[0]>>6, uint32(b[0]&0x3f)
	switch csid {
	case 0:
		if b, err = c.read(1); err != nil {
			return msg, false, noEOF(err)
		}
		csid = 64 + uint32(b[0])
	case 1:
		if b, err = c.read(2); err != nil {
			return msg, false, noEOF(err)
		}
		csid = 64 + uint32(b[0]) + uint32(b[1])<<8
	}
	cs := c.streams[csid]
	if cs == nil {
		if len(c.streams) >= maxChunkStreams {
			return msg, false, fmt.Errorf("rtmp: more than %d chunk streams: %w", maxChunkStreams, ErrMalformed)
		}
		cs = &chunkStream{}
		c.streams[csid] = cs
	}
	if fmtType != 3 && cs.assembling {
		// A new header in the middle of a message: the peer gave that message up.
		c.drop(cs)
	}
	if fmtType >= 2 && !cs.started {
		return msg, false, fmt.Errorf("rtmp: chunk stream %d starts with a type %d header: %w", csid, fmtType, ErrMalformed)
	}
	if err := c.readHeader(fmtType, cs); err != nil {
		return msg, false, noEOF(err)
	}
	if !cs.assembling {
		if cs.length > maxMessageSize {
			return msg, false, fmt.Errorf("rtmp: message of %d bytes exceeds %d: %w", cs.length, maxMessageSize, ErrMalformed)
		}
		if c.pending+int(cs.length) > maxPendingBytes {
			return msg, false, fmt.Errorf("rtmp: incomplete messages exceed %d bytes: %w", maxPendingBytes, ErrMalformed)
		}
		if fmtType == 3 {
			cs.timestamp += cs.delta // a new message with the previous delta
		}
		// The claimed length is not trusted with memory before the bytes come: large
		// messages start small and grow as their chunks arrive.
		cs.buf = make([]byte, 0, min(int(cs.length), initialMessageBuffer))
		cs.assembling = true
		c.pending += int(cs.length)
	}
	n := min(int(cs.length)-len(cs.buf), int(c.chunkSize))
	start := len(cs.buf)
	if start+n > cap(cs.buf) {
		grown := make([]byte, start, min(int(cs.length), max(2*cap(cs.buf), start+n)))
		copy(grown, cs.buf)
		cs.buf = grown
	}
	cs.buf = cs.buf[:start+n]
	if _, err := io.ReadFull(c.r, cs.buf[start:]); err != nil {
		return msg, false, noEOF(err)
	}
	if len(cs.buf) < int(cs.length) {
		return msg, false, nil
	}
	msg = message{Type: cs.typ, StreamID: cs.streamID, Timestamp: cs.timestamp, Body: cs.buf}
	c.drop(cs)
	return msg, true, c.control(msg)
}

// readHeader reads the message header of a chunk and its extended timestamp. A type 3 header
// repeats the extended timestamp when the stream's last header had one, as ffmpeg writes it.
func (c *chunkReader) readHeader(fmtType byte, cs *chunkStream) error {
	sizes := [4]int{11, 7, 3, 0}
	var ts uint32
	if n := sizes[fmtType]; n > 0 {
		b, err := c.read(n)
		if err != nil {
			return err
		}
		ts = uint24(b)
		if fmtType <= 1 {
			cs.length, cs.typ = uint24(b[3:]), b[6]
			cs.started = true
		}
		if fmtType == 0 {
			cs.streamID = binary.LittleEndian.Uint32(b[7:])
		}
		cs.extended = ts == 0xffffff
	}
	if cs.extended {
		b, err := c.read(4)
		if err != nil {
			return err
		}
		ts = binary.BigEndian.Uint32(b)
	}
	switch fmtType {
	case 0:
		// A type 3 header after a type 0 one uses the type 0 timestamp as its delta.
		cs.timestamp, cs.delta = ts, ts
	case 1, 2:
		cs.delta = ts
		cs.timestamp += ts
	}
	return nil
}

// drop forgets the message a chunk stream was assembling.
func (c *chunkReader) drop(cs *chunkStream) {
	c.pending -= int(cs.length)
	cs.buf, cs.assembling = nil, false
}

// control applies Set Chunk Size and Abort.
func (c *chunkReader) control(msg message) error {
	switch msg.Type {
	case msgSetChunkSize:
		if len(msg.Body) < 4 {
			return fmt.Errorf("rtmp: set chunk size of %d bytes: %w", len(msg.Body), ErrMalformed)
		}
		size := binary.BigEndian.Uint32(msg.Body) & 0x7fffffff
		if size == 0 {
			return fmt.Errorf("rtmp: chunk size 0: %w", ErrMalformed)
		}
		c.chunkSize = size
	case msgAbort:
		if len(msg.Body) >= 4 {
			if cs := c.streams[binary.BigEndian.Uint32(msg.Body)]; cs != nil && cs.assembling {
				c.drop(cs)
			}
		}
	}
	return nil
}

func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
