package rtmp

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"
)

// chunkCases are raw chunk streams, shared with the fuzz seeds.
var chunkCases = []struct {
	name string
	in   []byte
	want []message // messages other than Set Chunk Size
	err  error
}{
	{
		name: "type 0 then type 3 with the type 0 timestamp as delta",
		in: []byte{
			0x04, 0, 0, 10, 0, 0, 2, 9, 1, 0, 0, 0, 'a', 'b',
			0xc4, 'c', 'd',
		},
		want: []message{
			{Type: 9, StreamID: 1, Timestamp: 10, Body: []byte("ab")},
			{Type: 9, StreamID: 1, Timestamp: 20, Body: []byte("cd")},
		},
	},
	{
		name: "type 1 and 2 deltas",
		in: []byte{
			0x04, 0, 0, 0, 0, 0, 1, 8, 1, 0, 0, 0, 'a',
			0x44, 0, 0, 23, 0, 0, 2, 8, 'b', 'c',
			0x84, 0, 0, 23, 'd', 'e',
		},
		want: []message{
			{Type: 8, StreamID: 1, Timestamp: 0, Body: []byte("a")},
			{Type: 8, StreamID: 1, Timestamp: 23, Body: []byte("bc")},
			{Type: 8, StreamID: 1, Timestamp: 46, Body: []byte("de")},
		},
	},
	{
		name: "extended timestamp repeated in type 3 continuation",
		in: append(append([]byte{
			0x05, 0xff, 0xff, 0xff, 0, 0, 130, 9, 1, 0, 0, 0, 0x01, 0, 0, 0},
			bytes.Repeat([]byte{'x'}, 128)...),
			0xc5, 0x01, 0, 0, 0, 'y', 'z'),
		want: []message{{Type: 9, StreamID: 1, Timestamp: 0x01000000, Body: append(bytes.Repeat([]byte{'x'}, 128), 'y', 'z')}},
	},
	{
		name: "set chunk size then a long message in one chunk",
		in: append([]byte{
			0x02, 0, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0, 0, 0, 1, 0,
			0x06, 0, 0, 0, 0, 0, 200, 9, 1, 0, 0, 0}, bytes.Repeat([]byte{'v'}, 200)...),
		want: []message{{Type: 9, StreamID: 1, Body: bytes.Repeat([]byte{'v'}, 200)}},
	},
	{
		name: "two-byte chunk stream ID",
		in:   []byte{0x00, 10, 0, 0, 1, 0, 0, 1, 8, 1, 0, 0, 0, 'q'},
		want: []message{{Type: 8, StreamID: 1, Timestamp: 1, Body: []byte("q")}},
	},
	{
		name: "abort drops the partial message",
		in: append(append([]byte{0x04, 0, 0, 0, 0, 1, 0, 9, 1, 0, 0, 0}, bytes.Repeat([]byte{'p'}, 128)...),
			0x02, 0, 0, 0, 0, 0, 4, 2, 0, 0, 0, 0, 0, 0, 0, 4,
			0x04, 0, 0, 0, 0, 0, 1, 9, 1, 0, 0, 0, 'n'),
		want: []message{{Type: 9, StreamID: 1, Body: []byte("n")}},
	},
	{name: "type 2 first", in: []byte{0x84, 0, 0, 1}, err: ErrMalformed},
	{name: "type 3 first", in: []byte{0xc4, 0}, err: ErrMalformed},
	{name: "message too long", in: []byte{0x04, 0, 0, 0, 0xff, 0xff, 0xff, 9, 1, 0, 0, 0}, err: ErrMalformed},
	{name: "message one byte over the cap", in: []byte{0x04, 0, 0, 0, 0x80, 0, 1, 9, 1, 0, 0, 0}, err: ErrMalformed},
	{name: "declared 8 MiB, chunk size 2^31-1, 3 bytes sent", in: append(setChunkSize(1<<31-1), 0x04, 0, 0, 0, 0x80, 0, 0, 9, 1, 0, 0, 0, 1, 2, 3), err: io.ErrUnexpectedEOF},
	{name: "chunk size 0", in: []byte{0x02, 0, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0, 0, 0, 0, 0}, err: ErrMalformed},
	{name: "truncated header", in: []byte{0x04, 0, 0}, err: io.ErrUnexpectedEOF},
	{name: "truncated body", in: []byte{0x04, 0, 0, 0, 0, 0, 5, 9, 1, 0, 0, 0, 'a'}, err: io.ErrUnexpectedEOF},
}

func TestChunkReader(t *testing.T) {
	for _, tc := range chunkCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAllMessages(tc.in)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err %v, want %v", err, tc.err)
				}
				return
			}
			if !errors.Is(err, io.EOF) {
				t.Fatalf("err %v", err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("%d messages, want %d: %+v", len(got), len(tc.want), got)
			}
			for i := range got {
				g, w := got[i], tc.want[i]
				if g.Type != w.Type || g.StreamID != w.StreamID || g.Timestamp != w.Timestamp || !bytes.Equal(g.Body, w.Body) {
					t.Errorf("message %d: %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

// readAllMessages reads messages until an error, leaving out Set Chunk Size and Abort.
func readAllMessages(b []byte) ([]message, error) {
	cr := newChunkReader(bytes.NewReader(b))
	var msgs []message
	for {
		msg, err := cr.readMessage()
		if err != nil {
			return msgs, err
		}
		if msg.Type > msgAbort {
			msgs = append(msgs, msg)
		}
	}
}

func TestChunkWriterRoundTrip(t *testing.T) {
	for _, size := range []int{1, 128, 4096, outChunkSize} {
		var buf bytes.Buffer
		cw := newChunkWriter(&buf)
		if size != defaultChunkSize {
			b := []byte{byte(size >> 24), byte(size >> 16), byte(size >> 8), byte(size)}
			if err := cw.writeMessage(csidControl, msgSetChunkSize, 0, 0, b); err != nil {
				t.Fatal(err)
			}
			cw.chunkSize = size
		}
		want := []message{
			{Type: msgVideo, StreamID: 1, Timestamp: 0, Body: nil},
			{Type: msgVideo, StreamID: 1, Timestamp: 40, Body: bytes.Repeat([]byte{1}, 300000)},
			{Type: msgAudio, StreamID: 1, Timestamp: 0xfffffe, Body: []byte{2, 3}},
			{Type: msgAudio, StreamID: 1, Timestamp: 0x1000005, Body: bytes.Repeat([]byte{4}, 129)},
			{Type: msgCommandAMF0, StreamID: 0, Timestamp: 0xffffffff, Body: []byte("cmd")},
		}
		for _, m := range want {
			// Split the body in two parts: the writer concatenates them.
			half := len(m.Body) / 2
			if err := cw.writeMessage(csidFor(0), m.Type, m.StreamID, m.Timestamp, m.Body[:half], m.Body[half:]); err != nil {
				t.Fatal(err)
			}
		}
		got, err := readAllMessages(buf.Bytes())
		if !errors.Is(err, io.EOF) || len(got) != len(want) {
			t.Fatalf("chunk size %d: %d messages, %v", size, len(got), err)
		}
		for i := range got {
			if got[i].Timestamp != want[i].Timestamp || !bytes.Equal(got[i].Body, want[i].Body) || got[i].Type != want[i].Type {
				t.Fatalf("chunk size %d, message %d: ts %d len %d", size, i, got[i].Timestamp, len(got[i].Body))
			}
		}
	}
}

func TestChunkReaderLimits(t *testing.T) {
	// Many chunk streams.
	var b []byte
	for i := range maxChunkStreams + 1 {
		b = append(b, 0x00, byte(i), 0, 0, 0, 0, 0, 1, 9, 1, 0, 0, 0, 'x')
	}
	if _, err := readAllMessages(b); !errors.Is(err, ErrMalformed) {
		t.Fatalf("too many chunk streams: %v", err)
	}
	// Declarations alone cost nothing: every chunk stream declares 8 MiB, sends one byte.
	b = append(setChunkSize(1<<31-1), nil...)
	for i := range maxChunkStreams - 1 {
		b = append(b, 0x00, byte(i), 0, 0, 0, 0x80, 0, 0, 9, 1, 0, 0, 0, 'x')
	}
	cr, cnt := newCountedChunkReader(b)
	if err := readUntilError(cr); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("declarations: %v", err)
	}
	if cr.pending > 2*int(cnt.n) {
		t.Fatalf("declarations of %d MiB with %d bytes sent hold %d bytes", (maxChunkStreams-1)*8, cnt.n, cr.pending)
	}
	// Incomplete messages holding more than the budget: four chunk streams declare 8 MiB
	// each and send 1 MiB chunks in turn; past 16 MiB held the connection ends.
	b = setChunkSize(1 << 20)
	for round := range 8 {
		for i := range 4 {
			hdr := []byte{0xc4 + byte(i)}
			if round == 0 {
				hdr = []byte{0x04 + byte(i), 0, 0, 0, 0x80, 0, 0, 9, 1, 0, 0, 0}
			}
			b = append(append(b, hdr...), bytes.Repeat([]byte{byte(i)}, 1<<20)...)
		}
	}
	cr, cnt = newCountedChunkReader(b)
	err := readUntilError(cr)
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "incomplete messages over") {
		t.Fatalf("pending budget: %v", err)
	}
	if cnt.n < maxPendingBytes/2 {
		t.Fatalf("budget hit after %d bytes read: memory does not follow bytes", cnt.n)
	}
}

// readUntilError reads messages until one fails.
func readUntilError(cr *chunkReader) error {
	for {
		if _, err := cr.readMessage(); err != nil {
			return err
		}
	}
}

// setChunkSize is a Set Chunk Size message on chunk stream 2.
func setChunkSize(size uint32) []byte {
	return []byte{0x02, 0, 0, 0, 0, 0, 4, msgSetChunkSize, 0, 0, 0, 0, byte(size >> 24), byte(size >> 16), byte(size >> 8), byte(size)}
}

// newCountedChunkReader reads b, counting the bytes the reader has taken from it.
func newCountedChunkReader(b []byte) (*chunkReader, *countingReader) {
	cnt := &countingReader{r: bytes.NewReader(b)}
	return newChunkReader(cnt), cnt
}

// pieceWriter writes an 8 MiB message to a TCP connection in uneven pieces, as a slow peer
// would, while the reader checks at each read that what it holds follows what it received.
func TestChunkReaderAssemblesInPieces(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	const size = 8 << 20
	body := make([]byte, size)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range body {
		body[i] = byte(rng.Uint32())
	}
	errc := make(chan error, 1)
	go func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			errc <- err
			return
		}
		defer c.Close()
		out := append(setChunkSize(1<<31-1), 0x06, 0, 0, 40, 0x80, 0, 0, msgVideo, 1, 0, 0, 0)
		out = append(out, body...)
		for len(out) > 0 {
			n := min(len(out), 1+rng.IntN(96<<10))
			if _, err := c.Write(out[:n]); err != nil {
				errc <- err
				return
			}
			out = out[n:]
		}
		errc <- nil
	}()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	chk := &checkReader{r: c, t: t}
	cr := newChunkReader(chk)
	chk.cr = cr
	var msg message
	for msg.Type != msgVideo {
		if msg, err = cr.readMessage(); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if msg.Timestamp != 40 || msg.StreamID != 1 || !bytes.Equal(msg.Body, body) {
		t.Fatalf("message ts %d stream %d, %d bytes, equal %v", msg.Timestamp, msg.StreamID, len(msg.Body), bytes.Equal(msg.Body, body))
	}
	if cap(msg.Body) != size || cr.pending != 0 {
		t.Fatalf("body capacity %d, pending %d after the message", cap(msg.Body), cr.pending)
	}
	t.Logf("8 MiB in %d reads; the most held ahead of the bytes received: %d bytes", chk.reads, chk.worst)
}

// checkReader checks before each read that the chunk reader holds at most twice the bytes
// received so far.
type checkReader struct {
	r     io.Reader
	t     *testing.T
	cr    *chunkReader
	n     int
	reads int
	worst int
}

func (c *checkReader) Read(p []byte) (int, error) {
	if c.cr != nil {
		if c.cr.pending > 2*c.n {
			c.t.Errorf("holding %d bytes after %d received", c.cr.pending, c.n)
		}
		c.worst = max(c.worst, c.cr.pending-c.n)
	}
	n, err := c.r.Read(p)
	c.n += n
	c.reads++
	return n, err
}

func FuzzChunkReader(f *testing.F) {
	for _, tc := range chunkCases {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		cr, cnt := newCountedChunkReader(b)
		for {
			msg, err := cr.readMessage()
			if cr.pending < 0 || cr.pending > maxPendingBytes || cr.pending > 2*int(cnt.n) {
				t.Fatalf("pending %d after %d bytes read", cr.pending, cnt.n)
			}
			if err != nil {
				break
			}
			if msg.Type == msgCommandAMF0 || msg.Type == msgCommandAMF3 {
				if cmd, err := parseCommand(msg); err == nil {
					cmd.status()
					cmd.streamName()
				}
			}
		}
	})
}
