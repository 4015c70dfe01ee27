package httpts

import (
	"bytes"
	"io"
	"log/slog"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
	"github.com/sluicemedia/sluice/packager/flv"
	"github.com/sluicemedia/sluice/packager/mpegts"
)

var discard = slog.New(slog.DiscardHandler)

var aacTrack = []media.Track{{ID: 0, Codec: media.CodecAAC, ClockRate: 48000,
	Params: media.Params{AudioConfig: []byte{0x11, 0x90}, SampleRate: 48000, Channels: 2}}}

// aacUnits returns AAC units at the given timestamps (48 kHz).
func aacUnits(dts ...int64) []*media.AccessUnit {
	var aus []*media.AccessUnit
	for _, d := range dts {
		aus = append(aus, &media.AccessUnit{PTS: d, DTS: d, Key: true, Payload: [][]byte{{0x21, 0x10, 0x04, 0x60, 0x8c, 0x1c}}})
	}
	return aus
}

// auWriter is a muxer of access units: mpegts.Muxer, flv.FileWriter.
type auWriter interface {
	WriteAccessUnit(au *media.AccessUnit) error
}

// synth writes AAC units at the given timestamps with the muxer open makes.
func synth[W auWriter](tb testing.TB, open func(io.Writer, []media.Track) (W, error), dts ...int64) []byte {
	var out bytes.Buffer
	w, err := open(&out, aacTrack)
	if err != nil {
		tb.Fatal(err)
	}
	for _, au := range aacUnits(dts...) {
		if err := w.WriteAccessUnit(au); err != nil {
			tb.Fatal(err)
		}
	}
	return out.Bytes()
}

// synthTS muxes AAC units into MPEG-TS.
func synthTS(tb testing.TB, dts ...int64) []byte { return synth(tb, mpegts.NewMuxer, dts...) }

// synthFLV writes AAC units as an FLV file.
func synthFLV(tb testing.TB, dts ...int64) []byte { return synth(tb, flv.NewFileWriter, dts...) }

var bodyCases = []struct {
	name   string
	body   func(testing.TB) []byte
	format format
	units  int
}{
	{"ts", func(tb testing.TB) []byte { return synthTS(tb, 0, 1024, 2048, 3072) }, formatTS, 4},
	{"ts jump", func(tb testing.TB) []byte { return synthTS(tb, 48000*60, 48000*60+1024, 0, 1024) }, formatTS, 4},
	{"flv", func(tb testing.TB) []byte { return synthFLV(tb, 0, 1024, 2048, 3072) }, formatFLV, 4},
	{"empty", func(testing.TB) []byte { return nil }, formatTS, 0},
	{"flv header only", func(testing.TB) []byte { return []byte("FLV\x01\x05\x00\x00\x00\x09\x00\x00\x00\x00") }, formatFLV, 0},
	{"text", func(testing.TB) []byte { return bytes.Repeat([]byte("hello "), 100) }, formatTS, 0},
}

func TestIngestBody(t *testing.T) {
	for _, tc := range bodyCases {
		body := tc.body(t)
		if f := sniff(body); f != tc.format {
			t.Errorf("%s: sniffed %s, want %s", tc.name, f, tc.format)
		}
		s := stream.New(tc.name, stream.Options{Log: discard})
		units, err := ingestBody(bytes.NewReader(body), s, discard)
		if int(units) != tc.units || (err == nil) != (tc.units > 0) {
			t.Errorf("%s: %d units, %v; want %d", tc.name, units, err, tc.units)
		}
	}
}

// FuzzBody feeds arbitrary bodies to the ingest of the server and of Pull: no panic, and
// what is published is normalised.
func FuzzBody(f *testing.F) {
	for _, tc := range bodyCases {
		f.Add(tc.body(f))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		streamtest.CheckIngested(t, func(s *stream.Stream) { _, _ = ingestBody(bytes.NewReader(data), s, discard) })
	})
}
