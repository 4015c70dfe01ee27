package rtmp

import (
	"bytes"
	"errors"
	"io"
	"testing"
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
	// Incomplete messages claiming more than the budget.
	b = nil
	for i := range 3 {
		b = append(b, 0x04+byte(i), 0, 0, 0, 0x7f, 0xff, 0xff, 9, 1, 0, 0, 0)
		b = append(b, bytes.Repeat([]byte{'x'}, defaultChunkSize)...)
	}
	if _, err := readAllMessages(b); !errors.Is(err, ErrMalformed) {
		t.Fatalf("pending budget: %v", err)
	}
}

func FuzzChunkReader(f *testing.F) {
	for _, tc := range chunkCases {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		cr := newChunkReader(bytes.NewReader(b))
		for {
			msg, err := cr.readMessage()
			if err != nil {
				break
			}
			if cr.pending < 0 || cr.pending > maxPendingBytes {
				t.Fatalf("pending %d", cr.pending)
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
