package flv

import (
	"io"
	"math/rand/v2"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
)

// BenchmarkParseVideoTag parses a 20 kB AVC frame of three NAL units.
func BenchmarkParseVideoTag(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	body := AppendVideoFrame(nil, media.CodecH264, false, 80, [][]byte{{0x06, 5, 1, 0x80}, mediatest.NoZeros(rng, 30), mediatest.NoZeros(rng, 20000)})
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	var t VideoTag
	for b.Loop() {
		if err := ParseVideoTag(body, 4, &t); err != nil || len(t.NALUs) != 3 {
			b.Fatalf("%v, %d NAL units", err, len(t.NALUs))
		}
	}
}

// BenchmarkFileWriter writes one access unit per iteration.
func BenchmarkFileWriter(b *testing.B) {
	tracks := []media.Track{mediatest.H264(0), mediatest.AAC(1)}
	aus := mediatest.Synth(tracks, 10, 0, 25, true)
	w, err := NewFileWriter(io.Discard, tracks)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := w.WriteAccessUnit(aus[i%len(aus)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkDepacketize pushes one tag per iteration and takes its unit.
func BenchmarkDepacketize(b *testing.B) {
	tracks := []media.Track{mediatest.H264(0), mediatest.AAC(1)}
	tags := toTags(b, tracks, mediatest.Synth(tracks, 10, 0, 25, true))
	d := NewDepacketizer()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		tag := tags[i%len(tags)]
		tag.Timestamp += uint32(i / len(tags) * 10000)
		if err := d.Push(tag); err != nil {
			b.Fatal(err)
		}
		for d.Next() != nil {
		}
		i++
	}
}
