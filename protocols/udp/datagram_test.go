package udp

import (
	"bytes"
	"testing"
)

// tsPackets returns n fake TS packets.
func tsPackets(n int) []byte {
	b := make([]byte, n*188)
	for i := 0; i < len(b); i += 188 {
		b[i] = 0x47
		b[i+1] = byte(i)
	}
	return b
}

func rtpWrap(first byte, ext []byte, payload []byte, pad int) []byte {
	b := []byte{first, 33, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3}
	for range int(first & 0x0f) {
		b = append(b, 1, 2, 3, 4) // CSRC
	}
	b = append(b, ext...)
	b = append(b, payload...)
	if pad > 0 {
		b = append(b, make([]byte, pad-1)...)
		b = append(b, byte(pad))
	}
	return b
}

var payloadCases = []struct {
	name string
	in   []byte
	want []byte // nil: rejected
}{
	{"7 packets", tsPackets(7), tsPackets(7)},
	{"1 packet", tsPackets(1), tsPackets(1)},
	{"empty", nil, nil},
	{"short", tsPackets(1)[:100], nil},
	{"not aligned", append(tsPackets(2), 0x47), nil},
	{"bad second sync", func() []byte { b := tsPackets(2); b[188] = 0; return b }(), nil},
	{"rtp", rtpWrap(0x80, nil, tsPackets(7), 0), tsPackets(7)},
	{"rtp csrc", rtpWrap(0x82, nil, tsPackets(3), 0), tsPackets(3)},
	{"rtp extension", rtpWrap(0x90, []byte{0xbe, 0xde, 0, 1, 9, 9, 9, 9}, tsPackets(2), 0), tsPackets(2)},
	{"rtp padding", rtpWrap(0xa0, nil, tsPackets(2), 4), tsPackets(2)},
	{"rtp header only", rtpWrap(0x80, nil, nil, 0), nil},
	{"rtp padding past the header", append(rtpWrap(0xa0, nil, nil, 0), 200), nil},
	{"rtp padding of 255", rtpWrap(0xa0, nil, tsPackets(1), 255), tsPackets(1)},
	{"rtp truncated extension", []byte{0x90, 33, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0xbe}, nil},
	{"rtp version 1", rtpWrap(0x40, nil, tsPackets(7), 0), nil},
	{"rtp garbage payload", rtpWrap(0x80, nil, make([]byte, 188), 0), nil},
}

func TestTSPayload(t *testing.T) {
	for _, tc := range payloadCases {
		got := tsPayload(tc.in)
		if !bytes.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
			t.Errorf("%s: got %d bytes, want %d", tc.name, len(got), len(tc.want))
		}
	}
}

func FuzzTSPayload(f *testing.F) {
	for _, tc := range payloadCases {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p := tsPayload(b)
		if p != nil && !isTS(p) {
			t.Fatalf("payload of %d bytes is not TS", len(p))
		}
	})
}
