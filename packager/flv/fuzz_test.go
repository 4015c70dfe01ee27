package flv

import (
	"bytes"
	"testing"
)

// FuzzParseTag parses arbitrary tag bodies (the first byte picks audio or video), pushes them
// into a configured Depacketizer and reads them as an FLV file: nothing may panic.
func FuzzParseTag(f *testing.F) {
	for _, tc := range tagCases {
		f.Add(append([]byte{byte(tc.typ)}, tc.body...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		typ, body := TagType(data[0]), data[1:]
		var vt VideoTag
		var at AudioTag
		if typ == TagVideo {
			_ = ParseVideoTag(body, int(data[0]&3)+1, &vt)
		} else {
			_ = ParseAudioTag(body, &at)
		}

		d := NewDepacketizer()
		d.Expect(true, true)
		for _, tag := range []Tag{
			{Type: TagVideo, Body: avcSeq},
			{Type: TagAudio, Body: []byte{0xaf, 0, 0x11, 0x90}},
			{Type: typ, Timestamp: 40, Body: body},
			{Type: typ, Timestamp: 0xffffff00, Body: body},
		} {
			_ = d.Push(tag)
			for au := d.Next(); au != nil; au = d.Next() {
				if len(au.Payload) == 0 || au.Track < 0 || au.Track >= len(d.Tracks()) {
					t.Fatalf("unit of track %d with %d parts", au.Track, len(au.Payload))
				}
			}
		}

		r, err := NewFileReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		fd := NewDepacketizer()
		for range 1000 {
			tag, err := r.ReadTag()
			if err != nil {
				return
			}
			_ = fd.Push(tag)
			for fd.Next() != nil {
			}
		}
	})
}
