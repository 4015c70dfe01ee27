package avi

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
)

// synthTracks are an H.264 track with made-up parameter sets and a 48 kHz AAC track.
func synthTracks() []media.Track {
	return []media.Track{
		{ID: 0, Codec: media.CodecH264, ClockRate: 90000, Params: media.Params{
			SPS: []byte{0x67, 0x42, 0xc0, 0x1e}, PPS: []byte{0x68, 0xce, 0x3c, 0x80}, Width: 320, Height: 240}},
		{ID: 1, Codec: media.CodecAAC, ClockRate: 48000, Params: media.Params{
			AudioConfig: []byte{0x11, 0x90}, SampleRate: 48000, Channels: 2}},
	}
}

// synthUnits makes seconds of 25 fps video (a key frame a second) and AAC frames, in decode
// order, with the video missing over [gapFrom, gapTo) frames.
func synthUnits(rng *rand.Rand, seconds float64, gapFrom, gapTo int) []*media.AccessUnit {
	var aus []*media.AccessUnit
	frames := int(seconds * 25)
	audio := int64(0)
	for i := range frames {
		dts := int64(i) * 3600
		for ; media.Rescale(audio*1024, 48000, 90000) <= dts; audio++ {
			aus = append(aus, &media.AccessUnit{Track: 1, DTS: audio * 1024, PTS: audio * 1024, Key: true,
				Payload: [][]byte{randBytes(rng, 200+rng.IntN(100))}})
		}
		if i >= gapFrom && i < gapTo {
			continue
		}
		key := i%25 == 0
		n := randBytes(rng, 500+rng.IntN(2000))
		n[0] = 0x41
		if key {
			n[0] = 0x65
		}
		aus = append(aus, &media.AccessUnit{Track: 0, DTS: dts, PTS: dts + 3600, Key: key, Payload: [][]byte{n}})
	}
	return aus
}

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.IntN(255) + 1)
	}
	return b
}

// writeSynth writes units of synthTracks into a file (see writeFile) and returns its bytes.
func writeSynth(t testing.TB, units []*media.AccessUnit, opts Options, close bool) []byte {
	t.Helper()
	path, _ := writeFile(t, &clip{tracks: synthTracks(), units: units}, opts, !close)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// scanBytes parses a file's header and chunks.
func scanBytes(t *testing.T, b []byte) (layout, []totals, scanResult) {
	t.Helper()
	r := bytes.NewReader(b)
	lay, tot, movi, err := readLayout(r, int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	res, err := scanMovi(r, int64(len(b)), movi, &lay)
	if err != nil {
		t.Fatal(err)
	}
	return lay, tot, res
}

// TestGapFill checks that a gap in the video is filled with empty chunks, so that the video
// stays in time with the audio, and that key frames are told apart in the chunks.
func TestGapFill(t *testing.T) {
	units := synthUnits(rand.New(rand.NewPCG(1, 2)), 4, 30, 40)
	_, tot, res := scanBytes(t, writeSynth(t, units, Options{}, true))
	if tot[0].scale != 1 || tot[0].rate != 25 || tot[1].scale != 1024 || tot[1].rate != 48000 {
		t.Errorf("rates %d/%d and %d/%d, want 1/25 and 1024/48000", tot[0].scale, tot[0].rate, tot[1].scale, tot[1].rate)
	}
	var video, empty, keys int
	for _, e := range res.entries {
		if e.stream != 0 {
			continue
		}
		video++
		if e.size == 0 {
			empty++
			if video < 31 || video > 40 {
				t.Errorf("empty chunk at frame %d, outside the gap", video-1)
			}
		}
		if e.key {
			keys++
		}
	}
	if video != 100 || empty != 10 || keys != 4 {
		t.Errorf("%d video chunks, %d empty, %d key; want 100, 10, 4", video, empty, keys)
	}
}

func TestNewWriterErrors(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "x.avi"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	opus := []media.Track{{Codec: media.CodecOpus, ClockRate: 48000}}
	if _, err := NewWriter(f, opus, Options{}); !errors.Is(err, ErrUnsupportedCodec) || !errors.Is(err, media.ErrUnsupportedCodec) {
		t.Errorf("Opus: %v, want ErrUnsupportedCodec (media's too)", err)
	}
	noASC := []media.Track{{Codec: media.CodecAAC, ClockRate: 48000}}
	if _, err := NewWriter(f, noASC, Options{}); err == nil {
		t.Error("AAC without configuration: no error")
	}
	if _, err := NewWriter(f, synthTracks(), Options{RIFFLimit: 1000}); err == nil {
		t.Error("RIFF limit of 1000 bytes: no error")
	}
	if _, err := NewWriter(f, nil, Options{}); err == nil {
		t.Error("no tracks: no error")
	}
	w, err := NewWriter(f, synthTracks(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteUnit(&media.AccessUnit{Track: 5}); err == nil {
		t.Error("unit of track 5: no error")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteUnit(&media.AccessUnit{Track: 0}); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v, want ErrClosed", err)
	}
}

func TestEstimateRate(t *testing.T) {
	steps := func(clock int, d ...int64) []int64 {
		out := []int64{0}
		for i := 0; i < 12; i++ {
			out = append(out, out[len(out)-1]+d[i%len(d)])
		}
		return out
	}
	cases := []struct {
		name        string
		dts         []int64
		clock       int
		scale, rate uint32
	}{
		{"25 fps", steps(90000, 3600), 90000, 1, 25},
		{"29.97 fps", steps(90000, 3003), 90000, 1001, 30000},
		{"30 fps from milliseconds", steps(90000, 2970, 2970, 3060), 90000, 1, 30},
		// A rate next to its NTSC one (0.1% apart) is itself, not the first one near it.
		{"30 fps", steps(90000, 3000), 90000, 1, 30},
		{"60 fps", steps(90000, 1500), 90000, 1, 60},
		{"24 fps", steps(90000, 3750), 90000, 1, 24},
		{"59.94 fps", steps(90000, 1501, 1502), 90000, 1001, 60000},
		{"23.976 fps", steps(90000, 3754, 3754, 3753), 90000, 1001, 24000},
		{"25 fps with a gap", steps(90000, 3600, 3600, 3600, 36000), 90000, 1, 25},
		{"odd rate", steps(90000, 4000), 90000, 2, 45},
		{"one frame", []int64{0}, 90000, 1, 25},
	}
	for _, tc := range cases {
		if scale, rate := estimateRate(tc.dts, tc.clock, nil); scale != tc.scale || rate != tc.rate {
			t.Errorf("%s: %d/%d, want %d/%d", tc.name, scale, rate, tc.scale, tc.rate)
		}
	}
}

// TestRepairSynthetic cuts a synthetic file, written in small segments, at every 997th byte
// and checks that Repair keeps each whole chunk and that a second Repair changes nothing.
func TestRepairSynthetic(t *testing.T) {
	units := synthUnits(rand.New(rand.NewPCG(3, 4)), 8, -1, -1)
	data := writeSynth(t, units, Options{RIFFLimit: minRIFFLimit}, false)
	_, _, full := scanBytes(t, data)
	if len(full.segs) < 3 {
		t.Fatalf("%d segments, want several", len(full.segs))
	}
	dir := t.TempDir()
	for cut := int(full.segs[0].movi) + listHeaderSize; cut < len(data); cut += 997 {
		path := filepath.Join(dir, "cut.avi")
		if err := os.WriteFile(path, data[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		repairFile(t, path)
		once, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		_, _, res := scanBytes(t, once)
		whole := 0
		for _, e := range full.entries {
			if e.off+chunkHeaderSize+padded(int64(e.size)) <= int64(cut) {
				whole++
			}
		}
		if len(res.entries) != whole {
			t.Fatalf("cut at %d: %d chunks after repair, %d whole before", cut, len(res.entries), whole)
		}
		repairFile(t, path)
		twice, _ := os.ReadFile(path)
		if !bytes.Equal(once, twice) {
			t.Fatalf("cut at %d: a second Repair changed the file", cut)
		}
	}
}

// discard is an io.WriteSeeker that keeps nothing.
type discard struct{ pos, size int64 }

func (d *discard) Write(p []byte) (int, error) {
	d.pos += int64(len(p))
	d.size = max(d.size, d.pos)
	return len(p), nil
}

func (d *discard) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
		d.pos = off
	case io.SeekCurrent:
		d.pos += off
	case io.SeekEnd:
		d.pos = d.size + off
	}
	return d.pos, nil
}

// TestRateFromMilliseconds: video timed in whole milliseconds (what RTMP and FLV carry, on a
// 90 kHz clock) at 30 and 29.97 fps gets its own rate; nine frames of 33 and 34 ms steps could
// be either, as could 60 and 59.94 fps ones of 16 and 17 ms.
func TestRateFromMilliseconds(t *testing.T) {
	for _, tc := range []struct {
		num, den    int64 // frame rate
		scale, rate uint32
	}{{30, 1, 1, 30}, {30000, 1001, 1001, 30000}, {60, 1, 1, 60}, {60000, 1001, 1001, 60000}, {25, 1, 1, 25}} {
		var units []*media.AccessUnit
		for i := range 4 * tc.num / tc.den {
			ms := (i*1000*tc.den + tc.num/2) / tc.num
			n := []byte{0x41, 1, 2, 3}
			if i == 0 {
				n[0] = 0x65
			}
			units = append(units, &media.AccessUnit{Track: 0, DTS: ms * 90, PTS: ms * 90, Key: i == 0, Payload: [][]byte{n}})
		}
		_, tot, _ := scanBytes(t, writeSynth(t, units, Options{}, true))
		if tot[0].scale != tc.scale || tot[0].rate != tc.rate {
			t.Errorf("%d/%d fps in milliseconds: rate %d/%d, want %d/%d", tc.num, tc.den, tot[0].rate, tot[0].scale, tc.rate, tc.scale)
		}
	}
}

// TestHEVCFourCC: an H.265 stream is tagged "H265" in its stream header and format, the code
// ffmpeg, VLC, MediaInfo and GStreamer all read ("HEVC" GStreamer's avidemux does not know: no
// decoder found); a file tagged "HEVC" by an earlier version is still repaired as H.265.
func TestHEVCFourCC(t *testing.T) {
	trk := media.Track{ID: 0, Codec: media.CodecH265, ClockRate: 90000, Params: media.Params{
		VPS: []byte{0x40, 0x01, 0x0c}, SPS: []byte{0x42, 0x01, 0x01}, PPS: []byte{0x44, 0x01, 0xc0}, Width: 320, Height: 240}}
	var units []*media.AccessUnit
	for i := range 30 {
		n := []byte{0x02, 0x01, 0xaa, 0xbb} // TRAIL_R
		if i%10 == 0 {
			n = []byte{0x26, 0x01, 0xaa, 0xbb} // IDR_W_RADL
		}
		units = append(units, &media.AccessUnit{Track: 0, DTS: int64(i) * 3600, PTS: int64(i) * 3600, Key: i%10 == 0, Payload: [][]byte{n}})
	}
	path, _ := writeFile(t, &clip{tracks: []media.Track{trk}, units: units}, Options{}, false)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	strh := bytes.Index(b, []byte("strh"))
	strf := bytes.Index(b, []byte("strf"))
	if strh < 0 || strf < 0 {
		t.Fatal("no strh or strf")
	}
	if h, c := string(b[strh+12:strh+16]), string(b[strf+8+16:strf+8+20]); h != "H265" || c != "H265" {
		t.Errorf("handler %q, compression %q, want H265", h, c)
	}
	idr := []byte{0, 0, 1, 0x26, 0x01, 0xaa}
	for _, fcc := range []fourCC{{'H', '2', '6', '5'}, {'H', 'E', 'V', 'C'}} {
		if !isKeyFrame(fcc, idr) {
			t.Errorf("an IDR picture under %q is no key frame", fcc[:])
		}
	}
}
