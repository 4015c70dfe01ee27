package udp

import (
	"log/slog"
	"os"
	"os/exec"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
	"github.com/sluicemedia/sluice/packager/mpegts"
	"github.com/sluicemedia/sluice/protocols/internal/ingest"
)

var discard = slog.New(slog.DiscardHandler)

// synthAAC muxes AAC units whose timestamps step as given (in samples at 48 kHz).
func synthAAC(tb testing.TB, dts ...int64) []byte {
	tracks := []media.Track{{ID: 0, Codec: media.CodecAAC, ClockRate: 48000,
		Params: media.Params{AudioConfig: []byte{0x11, 0x90}, SampleRate: 48000, Channels: 2}}}
	var out []byte
	mux, err := mpegts.NewMuxer(writerFunc(func(p []byte) { out = append(out, p...) }), tracks)
	if err != nil {
		tb.Fatal(err)
	}
	for _, d := range dts {
		if err := mux.WriteAccessUnit(&media.AccessUnit{PTS: d, DTS: d, Key: true, Payload: [][]byte{{0x21, 0x10, 0x04, 0x60, 0x8c, 0x1c}}}); err != nil {
			tb.Fatal(err)
		}
	}
	return out
}

type writerFunc func([]byte)

func (w writerFunc) Write(p []byte) (int, error) { w(p); return len(p), nil }

// FuzzReceive feeds bytes as 1316-byte datagrams through the receive path: it must not
// panic, and what it publishes must be normalised.
func FuzzReceive(f *testing.F) {
	f.Add(synthAAC(f, 0, 1024, 2048, 3072, 4096, 5120))
	f.Add(synthAAC(f, 48000*100, 48000*100+1024, 0, 1024, 2048, 48000*100+2048, 3072, 900))
	f.Add(synthAAC(f, 0, 1024, 1000, 2048, 48000*30, 48000*30+1024))
	if ffmpeg, err := exec.LookPath("ffmpeg"); err == nil {
		out := f.TempDir() + "/seed.ts"
		cmd := exec.Command(ffmpeg, append(append([]string{"-hide_banner", "-loglevel", "error"},
			testutil.Pattern{Width: 64, Height: 48, FPS: 10, SampleRate: 44100}.Args()...),
			"-t", "0.5", "-c:v", "libx264", "-g", "2", "-c:a", "aac", "-f", "mpegts", out)...)
		if cmd.Run() == nil {
			if b, err := os.ReadFile(out); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		streamtest.CheckIngested(t, func(s *stream.Stream) {
			feed := ingest.NewTSFeed(ingest.NewPublisher(s, discard))
			for off := 0; off < len(data); off += DefaultPktSize {
				if p := tsPayload(data[off:min(off+DefaultPktSize, len(data))]); p != nil {
					_, _ = feed.Write(p)
				}
			}
			feed.Finish()
		})
	})
}
