package rtmp

import (
	"bufio"
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

// Reader limits. Memory follows the bytes a peer sends, never the lengths it declares: a
// message buffer is allocated and grown only as its payload arrives (at most twice what has
// arrived), so a header that declares 8 MiB and a chunk size of 2^31-1 (both valid) cost
// nothing until the bytes come.
const (
	// defaultChunkSize is the chunk size until the peer sets one (RTMP specification 5.4.1).
	defaultChunkSize = 128
	// maxChunkStreams caps the chunk stream IDs a peer may use on one connection (32): an
	// encoder uses 3 to 6 (control, command, audio, video, data).
	maxChunkStreams = 32
	// maxMessageSize caps the length a message may declare (8 MiB, bytes). The largest
	// message a live encoder sends is a key frame: at 50 Mbit/s with a 2 s GOP whose key
	// frame is a quarter of its bits, about 3 MiB; 8 MiB is more than twice that.
	maxMessageSize = 8 << 20
	// maxPendingBytes caps the bytes one connection holds in partly assembled messages, all
	// chunk streams together (16 MiB): room for two messages of maxMessageSize in flight,
	// where an encoder interleaves one key frame with small audio messages.
	maxPendingBytes = 16 << 20
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
	// buf holds the payload received so far: the message's own body when it came whole in
	// one chunk, else *scratch. Its capacity grows with what arrives and counts in the
	// reader's pending bytes.
	buf     []byte
	scratch *[]byte
}

// chunkReader reassembles messages from the chunks of one direction of a connection. It
// applies Set Chunk Size and Abort itself and hands every message, those included, to the
// caller. It is not safe for concurrent use.
type chunkReader struct {
	r         *bufio.Reader
	chunkSize uint32
	streams   map[uint32]*chunkStream
	// pending is the capacity of the message buffers being assembled, in bytes.
	pending int
	hdr     [11]byte
}

// newChunkReader reads chunks from r, through a bufio.Reader of readBufferSize unless r is
// one already: how much has arrived is what the message buffers may grow to.
func newChunkReader(r io.Reader) *chunkReader {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, readBufferSize)
	}
	return &chunkReader{r: br, chunkSize: defaultChunkSize, streams: make(map[uint32]*chunkStream)}
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
			return msg, false, fmt.Errorf("rtmp: chunk stream %d: more than %d chunk streams: %w", csid, maxChunkStreams, ErrMalformed)
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
			return msg, false, fmt.Errorf("rtmp: chunk stream %d: message of %d bytes over %d: %w", csid, cs.length, maxMessageSize, ErrMalformed)
		}
		if fmtType == 3 {
			cs.timestamp += cs.delta // a new message with the previous delta
		}
		cs.assembling = true
	}
	// Any chunk size up to 2^31-1 is valid; a large one only means that this chunk carries
	// the rest of the message, which is read as it comes.
	n := min(int(cs.length)-len(cs.buf), int(c.chunkSize))
	if err := c.readPayload(csid, cs, n); err != nil {
		return msg, false, noEOF(err)
	}
	if len(cs.buf) < int(cs.length) {
		return msg, false, nil
	}
	body := cs.buf
	if cs.scratch != nil {
		// The message's own body, exactly its length; the scratch buffer goes back.
		body = make([]byte, len(cs.buf))
		copy(body, cs.buf)
	}
	msg = message{Type: cs.typ, StreamID: cs.streamID, Timestamp: cs.timestamp, Body: body}
	c.drop(cs)
	return msg, true, c.control(msg)
}

// readPayload appends n payload bytes to the message cs is assembling. The buffer grows only
// when bytes are there to fill it (see grow): a peer that declares much and sends little
// costs what it sent.
func (c *chunkReader) readPayload(csid uint32, cs *chunkStream, n int) error {
	for n > 0 {
		if len(cs.buf) == cap(cs.buf) {
			// Wait for the chunk's bytes, as far as the read buffer holds them: they are
			// needed before anything else can be read, and the more are here, the fewer
			// times the buffer grows.
			if _, err := c.r.Peek(min(n, c.r.Size())); err != nil {
				return err
			}
			if err := c.grow(csid, cs, n); err != nil {
				return err
			}
		}
		start := len(cs.buf)
		k := min(n, cap(cs.buf)-start)
		cs.buf = cs.buf[:start+k]
		if _, err := io.ReadFull(c.r, cs.buf[start:]); err != nil {
			cs.buf = cs.buf[:start]
			return err
		}
		n -= k
	}
	return nil
}

// grow makes room in cs.buf for more of the n payload bytes of the current chunk, at least
// one of which has arrived, within the connection's pending budget. A message whose bytes
// are all here in this one chunk gets its own body at once. Otherwise the bytes go to a
// buffer of twice the old capacity, or of what has arrived of the chunk if that is more:
// a pooled scratch buffer when its size class is within twice the bytes received, else one
// of that size. Either way the capacity stays within twice the bytes received.
func (c *chunkReader) grow(csid uint32, cs *chunkStream, n int) error {
	old, arrived := cap(cs.buf), min(n, c.r.Buffered())
	if len(cs.buf) == 0 && n == int(cs.length) && arrived == n {
		if c.pending+n-old > maxPendingBytes {
			return c.overBudget(csid)
		}
		c.pending += n - old
		putScratch(cs.scratch)
		cs.buf, cs.scratch = make([]byte, 0, n), nil
		return nil
	}
	received := len(cs.buf) + arrived
	size := max(2*old, received)
	var b *[]byte
	if class := minScratch << scratchClass(size); class <= 2*received {
		size, b = class, getScratch(class)
	} else {
		// Too few bytes yet for the smallest class: a buffer of their size, not pooled.
		nb := make([]byte, 0, size)
		b = &nb
	}
	if c.pending+size-old > maxPendingBytes {
		putScratch(b)
		return c.overBudget(csid)
	}
	*b = append(*b, cs.buf...)
	putScratch(cs.scratch)
	c.pending += size - old
	cs.buf, cs.scratch = *b, b
	return nil
}

func (c *chunkReader) overBudget(csid uint32) error {
	return fmt.Errorf("rtmp: chunk stream %d: incomplete messages over %d bytes: %w", csid, maxPendingBytes, ErrMalformed)
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

// drop forgets the message a chunk stream was assembling, or hands it over once complete.
func (c *chunkReader) drop(cs *chunkStream) {
	c.pending -= cap(cs.buf)
	putScratch(cs.scratch)
	cs.buf, cs.scratch, cs.assembling = nil, nil, false
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
