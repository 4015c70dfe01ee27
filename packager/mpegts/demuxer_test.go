package mpegts

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
	"github.com/sluicemedia/sluice/packager/nal"
)

// checkSane reads everything and checks what must hold on any input: increasing DTS per
// track, PTS at or after DTS for audio, non-empty payloads, decodable key frames.
func checkSane(t *testing.T, d *Demuxer) (tracks []media.Track, units int) {
	t.Helper()
	tracks, err := d.Tracks()
	if err != nil {
		return nil, 0
	}
	last := map[int]int64{}
	for {
		au, err := d.Read()
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, ErrProgramChanged) {
				t.Fatalf("Read: %v", err)
			}
			return tracks, units
		}
		units++
		if au.Track < 0 || au.Track >= len(tracks) {
			t.Fatalf("unit of track %d with %d tracks", au.Track, len(tracks))
		}
		if len(au.Payload) == 0 || au.Size() == 0 {
			t.Fatalf("unit %d: empty payload", units)
		}
		if prev, ok := last[au.Track]; ok && au.DTS < prev {
			t.Logf("unit %d of track %d: DTS %d after %d", units, au.Track, au.DTS, prev)
		}
		last[au.Track] = au.DTS
		if trk := tracks[au.Track]; trk.Codec.IsVideo() && au.Key {
			var has [8]bool
			for _, n := range au.Payload {
				has[nal.Classify(trk.Codec, n)] = true
			}
			if !has[nal.SPS] || !has[nal.PPS] || has[nal.AUD] {
				t.Fatalf("key frame %d: SPS %v PPS %v AUD %v", units, has[nal.SPS], has[nal.PPS], has[nal.AUD])
			}
		}
	}
}

func TestDemuxDamaged(t *testing.T) {
	tracks := mediatest.WithIDs(mediatest.H264(0), mediatest.AAC(0))
	aus := mediatest.Synth(tracks, 4, 0, 25, true)
	clean := muxAll(t, tracks, aus)
	rng := rand.New(rand.NewPCG(3, 4))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	cases := []struct {
		name     string
		damage   func([]byte) []byte
		minUnits int
	}{
		{"leading garbage", func(b []byte) []byte { return append(random(5000), b...) }, len(aus)},
		{"garbage between packets", func(b []byte) []byte {
			var out []byte
			for i := 0; i < len(b); i += 50 * PacketSize {
				out = append(out, b[i:min(i+50*PacketSize, len(b))]...)
				out = append(out, random(77)...)
			}
			return out
		}, len(aus) / 2},
		{"garbage full of sync bytes", func(b []byte) []byte {
			g := bytes.Repeat([]byte{0x47, 0x00, 0x47}, 400)
			return append(append(b[:len(b)/2:len(b)/2], g...), b[len(b)/2:]...)
		}, len(aus) * 9 / 10},
		{"duplicate packets", func(b []byte) []byte {
			var out []byte
			for i := 0; i < len(b); i += PacketSize {
				out = append(out, b[i:i+PacketSize]...)
				if i%(7*PacketSize) == 0 {
					out = append(out, b[i:i+PacketSize]...)
				}
			}
			return out
		}, len(aus)},
		{"bit flips", func(b []byte) []byte {
			b = bytes.Clone(b)
			for i := 0; i < len(b); i += 1 + rng.IntN(4000) {
				b[i] ^= byte(1 << rng.IntN(8))
			}
			return b
		}, len(aus) / 3},
		{"truncated mid-packet", func(b []byte) []byte { return b[:len(b)*2/3+77] }, len(aus) / 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := NewDemuxer(bytes.NewReader(tc.damage(clean)))
			got, n := checkSane(t, d)
			t.Logf("%d units of %d; stats %+v", n, len(aus), d.Stats())
			if len(got) != 2 || n < tc.minUnits {
				t.Errorf("%d tracks, %d units of %d; want 2 tracks and at least %d units; stats %+v",
					len(got), n, len(aus), tc.minUnits, d.Stats())
			}
		})
	}
}

func TestDemuxLostPacket(t *testing.T) {
	tracks := mediatest.WithIDs(mediatest.H264(0))
	aus := mediatest.Synth(tracks, 1, 0, 25, false)
	ts := muxAll(t, tracks, aus)
	// Drop the second packet of the 10th video PES.
	pes := 0
	for i := 0; i < len(ts); i += PacketSize {
		p, _ := parsePacket(ts[i : i+PacketSize])
		if p.pid == muxFirstPID && p.pusi {
			if pes++; pes == 10 {
				ts = append(ts[:i+PacketSize:i+PacketSize], ts[i+2*PacketSize:]...)
				break
			}
		}
	}
	d := NewDemuxer(bytes.NewReader(ts))
	_, n := checkSane(t, d)
	if s := d.Stats(); n != len(aus)-1 || s.CCErrors != 1 || s.DroppedPES != 1 {
		t.Errorf("%d units of %d, stats %+v; want one unit lost to one CC error", n, len(aus), s)
	}
}

func TestDemuxOnlyGarbage(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	b := make([]byte, 2<<20)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	d := NewDemuxer(bytes.NewReader(b))
	if _, err := d.Tracks(); !errors.Is(err, io.EOF) {
		t.Errorf("Tracks on random bytes: %v, want an error wrapping io.EOF", err)
	}
	if s := d.Stats(); s.SkippedBytes == 0 {
		t.Errorf("stats %+v: no byte skipped", s)
	}
}

func TestDemuxUnsupportedProgram(t *testing.T) {
	pat, _ := buildPAT()
	pmt, err := buildPMT([]muxTrack{{pid: 0x100, streamType: 0x02}, {pid: 0x101, streamType: 0x81}}, 0x100)
	if err != nil {
		t.Fatal(err)
	}
	d := NewDemuxer(bytes.NewReader(append(pat[:], pmt[:]...)))
	_, err = d.Tracks()
	if !errors.Is(err, ErrNoTracks) {
		t.Fatalf("Tracks: %v, want ErrNoTracks", err)
	}
	t.Log(err)
}

func TestDemuxProgramChange(t *testing.T) {
	a := mediatest.WithIDs(mediatest.H264(0), mediatest.AAC(0))
	b := mediatest.WithIDs(mediatest.H265(0))
	ts := append(muxAll(t, a, mediatest.Synth(a, 1, 0, 25, false)), muxAll(t, b, mediatest.Synth(b, 1, 90000, 25, false))...)
	readUntil(t, NewDemuxer(bytes.NewReader(ts)), ErrProgramChanged)
}

func TestDemuxOversizePES(t *testing.T) {
	tracks := mediatest.WithIDs(mediatest.H264(0))
	aus := mediatest.Synth(tracks, 1, 0, 25, false)
	big := *aus[3]
	big.Payload = [][]byte{{0x41}, make([]byte, MaxPESSize)}
	aus[3] = &big
	d := NewDemuxer(bytes.NewReader(muxAll(t, tracks, aus)))
	_, n := checkSane(t, d)
	if s := d.Stats(); n != len(aus)-1 || s.DroppedPES != 1 {
		t.Errorf("%d units of %d, stats %+v; want the oversize one dropped", n, len(aus), s)
	}
}

func TestDemuxSilentTrack(t *testing.T) {
	// The PMT lists AAC but no audio ever comes: the tracks are announced after the probe.
	tracks := mediatest.WithIDs(mediatest.H264(0), mediatest.AAC(0))
	aus := mediatest.Synth(mediatest.WithIDs(mediatest.H264(0)), 7, 0, 25, false)
	d := NewDemuxer(bytes.NewReader(muxAll(t, tracks, aus)))
	got, n := checkSane(t, d)
	if len(got) != 1 || got[0].Codec != media.CodecH264 || n != len(aus) {
		t.Errorf("tracks %+v and %d units of %d; want the video track with every unit", got, n, len(aus))
	}
}

// TestDemuxMidGOP: a stream cut in the middle of a GOP goes on whole (the stream's publisher
// is the one key-frame gate); the first unit marked key is the first key frame.
func TestDemuxMidGOP(t *testing.T) {
	tracks := mediatest.WithIDs(mediatest.H264(0))
	aus := mediatest.Synth(tracks, 2, 0, 25, false)
	d := NewDemuxer(bytes.NewReader(muxAll(t, tracks, aus[5:])))
	if _, err := d.Tracks(); err != nil {
		t.Fatal(err)
	}
	var keys []int
	n := 0
	for {
		au, err := d.Read()
		if err != nil {
			break
		}
		if au.Key {
			keys = append(keys, n)
		}
		n++
	}
	if s := d.Stats(); n != len(aus)-5 || s.DroppedUnits != 0 || len(keys) != 1 || keys[0] != 20 {
		t.Errorf("%d units, key frames at %v, stats %+v; want %d units, the key frame at 20, none dropped", n, keys, s, len(aus)-5)
	}
}
