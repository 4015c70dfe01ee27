package rtmp

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/yutopp/go-rtmp/handshake"
)

// Window sizes we announce: the peer acknowledges every ackWindow bytes it receives.
const ackWindow = 2500000

// User control events (RTMP specification, section 7.1.7).
const (
	ucStreamBegin     = 0
	ucStreamEOF       = 1
	ucSetBufferLength = 3
	ucPingRequest     = 6
	ucPingResponse    = 7
)

// readBufferSize is the size of the buffered reader under the chunk reader (16 KiB, bytes),
// allocated once the handshake is done. It is most of what an idle connection costs, and it
// bounds how far a message buffer may grow ahead of the bytes it holds. At 50 Mbit/s it
// means about 400 reads a second.
const readBufferSize = 16 << 10

// countingReader counts the bytes read from the connection, for acknowledgements.
type countingReader struct {
	r io.Reader
	n uint64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += uint64(n)
	return n, err
}

// conn is one RTMP connection, client or server side: messages in through a chunkReader, out
// through a chunkWriter. It acknowledges what it receives, answers pings and keeps the
// deadlines. Reading is for one goroutine; writing is safe for concurrent use.
type conn struct {
	nc  net.Conn
	cnt countingReader
	br  *bufio.Reader
	cr  *chunkReader

	// Owned by the reading goroutine.
	readTimeout time.Duration
	readSet     time.Time // when the read deadline was last moved
	setupBy     time.Time // reads end by then unless cleared (setSetupDeadline); zero: none
	peerWindow  uint32    // acknowledge every peerWindow bytes; 0 until the peer says
	lastAck     uint64

	wmu          sync.Mutex
	cw           *chunkWriter
	writeTimeout time.Duration
	writeSet     time.Time

	closeOnce sync.Once
}

func newConn(nc net.Conn, readTimeout, writeTimeout time.Duration) *conn {
	c := &conn{nc: nc, readTimeout: readTimeout, writeTimeout: writeTimeout}
	c.cnt.r = nc
	c.cw = newChunkWriter(nc)
	return c
}

// startReading allocates the read buffers, once the handshake is through.
func (c *conn) startReading() {
	if c.cr == nil {
		c.br = bufio.NewReaderSize(&c.cnt, readBufferSize)
		c.cr = newChunkReader(c.br)
	}
}

// handshake runs the plain RTMP handshake (C0-C2/S0-S2) within the read timeout (and the
// setup deadline, if set): a peer that stalls in it is cut then, however it trickles. The
// echo of our random bytes is not checked: encoders that answer with the digest variant
// pass too. The handshake reads exactly its 3073 bytes, unbuffered, so that a connection
// costs no read buffer until it is through.
func (c *conn) handshake(server bool) error {
	if d := c.deadline(time.Now()); !d.IsZero() {
		_ = c.nc.SetDeadline(d)
	}
	cfg := &handshake.Config{SkipHandshakeVerification: true}
	var err error
	if server {
		err = handshake.HandshakeWithClient(&c.cnt, c.nc, cfg)
	} else {
		err = handshake.HandshakeWithServer(&c.cnt, c.nc, cfg)
	}
	_ = c.nc.SetDeadline(time.Time{})
	if err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	c.startReading()
	return nil
}

// deadline is when a read started at now must end: the read timeout from now, but no later
// than the setup deadline. Zero means none.
func (c *conn) deadline(now time.Time) time.Time {
	var d time.Time
	if c.readTimeout > 0 {
		d = now.Add(c.readTimeout)
	}
	if !c.setupBy.IsZero() && (d.IsZero() || c.setupBy.Before(d)) {
		d = c.setupBy
	}
	return d
}

// setSetupDeadline sets (or, with the zero time, clears) the time by which the connection
// must have started publishing or playing. Called by the reading goroutine.
func (c *conn) setSetupDeadline(t time.Time) {
	c.setupBy = t
	c.readSet = time.Time{} // the next read moves the deadline
}

// setReadTimeout changes the read timeout; 0 waits for ever (a player sends almost nothing).
// Called by the reading goroutine.
func (c *conn) setReadTimeout(d time.Duration) {
	c.readTimeout = d
	c.readSet = time.Time{}
	if c.deadline(time.Now()).IsZero() {
		_ = c.nc.SetReadDeadline(time.Time{})
	}
}

// readMessage returns the next message. Protocol control messages are handled here and not
// returned, except user control events other than ping.
func (c *conn) readMessage() (message, error) {
	c.startReading()
	for {
		if c.readTimeout > 0 || !c.setupBy.IsZero() {
			// Moving the deadline costs a timer update: do it at most four times a timeout.
			if now := time.Now(); c.readSet.IsZero() || now.Sub(c.readSet) > c.readTimeout/4 {
				_ = c.nc.SetReadDeadline(c.deadline(now))
				c.readSet = now
			}
		}
		msg, err := c.cr.readMessage()
		if err != nil {
			return msg, err
		}
		if c.peerWindow > 0 && c.cnt.n-c.lastAck >= uint64(c.peerWindow) {
			c.lastAck = c.cnt.n
			if err := c.writeControl(msgAck, uint32(c.cnt.n)); err != nil {
				return msg, err
			}
		}
		switch msg.Type {
		case msgSetChunkSize, msgAbort, msgAck, msgSetPeerBandwidth:
			continue
		case msgWinAckSize:
			if len(msg.Body) >= 4 {
				c.peerWindow = binary.BigEndian.Uint32(msg.Body)
			}
			continue
		case msgUserControl:
			if len(msg.Body) >= 6 && binary.BigEndian.Uint16(msg.Body) == ucPingRequest {
				if err := c.writeUserControl(ucPingResponse, binary.BigEndian.Uint32(msg.Body[2:])); err != nil {
					return msg, err
				}
				continue
			}
		}
		return msg, nil
	}
}

// write sends one message.
func (c *conn) write(csid, typ uint8, streamID, ts uint32, parts ...[]byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.writeTimeout > 0 {
		if now := time.Now(); now.Sub(c.writeSet) > c.writeTimeout/4 {
			_ = c.nc.SetWriteDeadline(now.Add(c.writeTimeout))
			c.writeSet = now
		}
	}
	return c.cw.writeMessage(csid, typ, streamID, ts, parts...)
}

// writeControl sends a protocol control message with a 32-bit value: Ack, Window Ack Size.
func (c *conn) writeControl(typ uint8, v uint32) error {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], v)
	return c.write(csidControl, typ, 0, 0, b[:])
}

// writeUserControl sends a user control event with a 32-bit value (a stream ID or a time).
func (c *conn) writeUserControl(event uint16, v uint32, extra ...uint32) error {
	b := binary.BigEndian.AppendUint16(nil, event)
	b = binary.BigEndian.AppendUint32(b, v)
	for _, x := range extra {
		b = binary.BigEndian.AppendUint32(b, x)
	}
	return c.write(csidControl, msgUserControl, 0, 0, b)
}

// setChunkSize announces our chunk size and writes with it from now on.
func (c *conn) setChunkSize(size int) error {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(size))
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.cw.writeMessage(csidControl, msgSetChunkSize, 0, 0, b[:]); err != nil {
		return err
	}
	c.cw.chunkSize = size
	return nil
}

// writeCommand sends an AMF0 command: its name, transaction ID and arguments.
func (c *conn) writeCommand(csid uint8, streamID uint32, name string, txn float64, args ...any) error {
	b := amfAppend(nil, name, txn)
	return c.write(csid, msgCommandAMF0, streamID, 0, amfAppend(b, args...))
}

// writeStatus sends an onStatus command about a message stream.
func (c *conn) writeStatus(streamID uint32, level, code, description string) error {
	return c.writeCommand(csidData, streamID, "onStatus", 0, nil,
		amfObj{{"level", level}, {"code", code}, {"description", description}})
}

// drain ends the connection politely after a refusal: our side is shut for writing, so what
// we sent reaches the peer, and what the peer still sends is read and ignored for at most d,
// so that closing does not reset the connection under our last message.
func (c *conn) drain(d time.Duration) {
	c.setupBy = time.Time{}
	c.setReadTimeout(0)
	_ = c.nc.SetReadDeadline(time.Now().Add(d))
	if tc, ok := c.nc.(interface{ CloseWrite() error }); ok {
		_ = tc.CloseWrite()
	}
}

// close closes the connection; a blocked read or write returns. Idempotent.
func (c *conn) close() {
	c.closeOnce.Do(func() { _ = c.nc.Close() })
}

// isClosedErr tells whether err only says that the connection ended.
func isClosedErr(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
