package rtmp

import (
	"bytes"
	"testing"
)

// BenchmarkChunkReader reads one second of a 6 Mbit/s publication as ffmpeg chunks it (4 KiB
// chunks, audio and video interleaved): 25 video messages of 30 KB, one of them a 300 KB key
// frame, and 43 AAC messages of 372 bytes. One op is that second; allocs/op counts every
// buffer, the message bodies (owned by the caller) included.
func BenchmarkChunkReader(b *testing.B) {
	var buf bytes.Buffer
	cw := newChunkWriter(&buf)
	if err := cw.writeMessage(csidControl, msgSetChunkSize, 0, 0, []byte{0, 0, 0x10, 0}); err != nil {
		b.Fatal(err)
	}
	cw.chunkSize = 4096
	video, key, audio := make([]byte, 30000), make([]byte, 300000), make([]byte, 372)
	messages := 0
	for i := range 43 {
		if i < 25 {
			body := video
			if i == 0 {
				body = key
			}
			if err := cw.writeMessage(csidVideo, msgVideo, 1, uint32(i*40), body); err != nil {
				b.Fatal(err)
			}
			messages++
		}
		if err := cw.writeMessage(csidAudio, msgAudio, 1, uint32(i*23), audio); err != nil {
			b.Fatal(err)
		}
		messages++
	}
	in := buf.Bytes()
	r := bytes.NewReader(in)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(in)
		cr := newChunkReader(r)
		for n := 0; n <= messages; n++ { // Set Chunk Size too
			if _, err := cr.readMessage(); err != nil {
				b.Fatal(err)
			}
		}
	}
}
