package ingest

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/packager/mpegts"
)

var discard = slog.New(slog.DiscardHandler)

// synthTS muxes AAC units at the given timestamps (48 kHz).
func synthTS(tb testing.TB, dts ...int64) []byte {
	tracks := []media.Track{{ID: 0, Codec: media.CodecAAC, ClockRate: 48000,
		Params: media.Params{AudioConfig: []byte{0x11, 0x90}, SampleRate: 48000, Channels: 2}}}
	var out bytes.Buffer
	mux, err := mpegts.NewMuxer(&out, tracks)
	if err != nil {
		tb.Fatal(err)
	}
	for _, d := range dts {
		if err := mux.WriteAccessUnit(&media.AccessUnit{PTS: d, DTS: d, Key: true, Payload: [][]byte{{0x21, 0x10, 0x04, 0x60, 0x8c, 0x1c}}}); err != nil {
			tb.Fatal(err)
		}
	}
	return out.Bytes()
}

// FuzzPipe feeds arbitrary bytes as ffmpeg's stdout, in uneven writes: no panic, and the
// units published keep DTS increasing per track within a session.
func FuzzPipe(f *testing.F) {
	f.Add(synthTS(f, 0, 1024, 2048, 3072), uint8(100))
	f.Add(synthTS(f, 48000*60, 48000*60+1024, 0, 1024, 900, 2048), uint8(7))
	f.Add([]byte("not a transport stream"), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, step uint8) {
		s := stream.New("fuzz", stream.Options{Log: discard})
		r, err := s.NewReader("fuzz")
		if err != nil {
			t.Fatal(err)
		}
		out := &pipeOut{feed: NewTSFeed(NewPublisher(s, discard)), fail: func(error) {}}
		n := int(step) + 1
		for i := 0; i < len(data); i += n {
			_, _ = out.Write(data[i:min(i+n, len(data))])
		}
		out.feed.Finish()
		tracks := s.Tracks()
		s.Close()
		last := map[int]int64{}
		for {
			au, err := r.Read(context.Background())
			if err != nil {
				break
			}
			if au.Discontinuity {
				clear(last)
			}
			if au.Track < 0 || au.Track >= len(tracks) {
				t.Fatalf("unit of track %d, %d tracks", au.Track, len(tracks))
			}
			if l, ok := last[au.Track]; ok && au.DTS <= l {
				t.Fatalf("track %d: DTS %d after %d", au.Track, au.DTS, l)
			}
			last[au.Track] = au.DTS
		}
	})
}
