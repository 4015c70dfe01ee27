package mpegts

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
)

func TestMuxerLayout(t *testing.T) {
	tracks := mediatest.WithIDs(mediatest.AAC(0), mediatest.H264(0)) // video second: the PCR still goes on video
	aus := mediatest.Synth(tracks, 2, 90000, 25, true)
	ts := muxAll(t, tracks, aus)
	videoPID := uint16(muxFirstPID + 1)
	cc := map[uint16]int{}
	var pesStarts, pcrs, keys, tablesBeforeKey int
	lastPID := uint16(0xffff)
	for i := 0; i < len(ts); i += PacketSize {
		p, err := parsePacket(ts[i : i+PacketSize])
		if err != nil {
			t.Fatalf("packet %d: %v", i/PacketSize, err)
		}
		if i == 0 && p.pid != pidPAT || i == PacketSize && p.pid != muxPMTPID {
			t.Fatalf("stream starts with PID %d", p.pid)
		}
		if prev, ok := cc[p.pid]; ok && int(p.cc) != (prev+1)&0x0f {
			t.Fatalf("packet %d on PID %d: continuity counter %d after %d", i/PacketSize, p.pid, p.cc, prev)
		}
		cc[p.pid] = int(p.cc)
		if p.pid == videoPID && p.pusi {
			pesStarts++
			b := ts[i : i+PacketSize]
			af := b[5]
			if b[3]&0x20 != 0 && af&0x10 != 0 {
				pcrs++
			}
			if af&0x40 != 0 {
				keys++
				if lastPID == muxPMTPID {
					tablesBeforeKey++
				}
			}
			// The elementary stream starts with an access unit delimiter.
			es := p.payload[9+int(p.payload[8]):]
			if !bytes.HasPrefix(es, []byte{0, 0, 0, 1, 0x09, 0xf0}) {
				t.Fatalf("video PES %d starts with % x, want an AUD", pesStarts, es[:6])
			}
		}
		lastPID = p.pid
	}
	if pesStarts != 50 || pcrs != 50 || keys != 2 || tablesBeforeKey != 2 {
		t.Errorf("%d video PES, %d with PCR, %d random access, %d after tables; want 50, 50, 2, 2",
			pesStarts, pcrs, keys, tablesBeforeKey)
	}
	if cc[pidPAT] < 2 {
		t.Errorf("PAT written %d times in 2 s", cc[pidPAT]+1)
	}
}

func TestMuxerErrors(t *testing.T) {
	badAAC := mediatest.AAC(0)
	badAAC.Params.AudioConfig = []byte{0xff}
	rateless := mediatest.H264(0)
	rateless.ClockRate = 0
	for _, tc := range []struct {
		name   string
		tracks []media.Track
		is     error
	}{
		{"no track", nil, nil},
		{"unknown codec", []media.Track{{Codec: media.CodecUnknown, ClockRate: 90000}}, ErrUnsupportedCodec},
		{"unknown codec, as media says it", []media.Track{{Codec: media.CodecUnknown, ClockRate: 90000}}, media.ErrUnsupportedCodec},
		{"bad AAC config", []media.Track{badAAC}, nil},
		{"no clock rate", []media.Track{rateless}, nil},
		{"Opus without channels", []media.Track{{Codec: media.CodecOpus, ClockRate: 48000}}, nil},
	} {
		_, err := NewMuxer(io.Discard, tc.tracks)
		if err == nil || tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("%s: NewMuxer error %v, want %v", tc.name, err, tc.is)
		}
	}
	m := newMuxer(t, io.Discard, mediatest.WithIDs(mediatest.H264(0)))
	if err := m.WriteAccessUnit(&media.AccessUnit{Track: 3, Payload: [][]byte{{1}}}); !errors.Is(err, ErrUnknownTrack) || !errors.Is(err, media.ErrUnknownTrack) {
		t.Errorf("unit of an unknown track: %v", err)
	}
	if err := m.WriteAccessUnit(&media.AccessUnit{}); err == nil {
		t.Errorf("empty unit: no error")
	}
}

func TestMuxerAppendWholePackets(t *testing.T) {
	tracks := mediatest.WithIDs(mediatest.H264(0), mediatest.AAC(0))
	m := newMuxer(t, io.Discard, tracks)
	var dst []byte
	var err error
	for _, au := range mediatest.Synth(tracks, 1, 0, 25, true) {
		if dst, err = m.AppendAccessUnit(dst[:0], au); err != nil {
			t.Fatal(err)
		}
		if len(dst) == 0 || len(dst)%PacketSize != 0 {
			t.Fatalf("%d bytes for one unit", len(dst))
		}
	}
}

// TestMuxerNoAllocs holds the steady-state goal: no allocation per access unit.
func TestMuxerNoAllocs(t *testing.T) {
	tracks := mediatest.WithIDs(mediatest.H264(0), mediatest.AAC(0))
	aus := mediatest.Synth(tracks, 2, 0, 25, true)
	m := newMuxer(t, io.Discard, tracks)
	for _, au := range aus { // grow the buffers
		if err := m.WriteAccessUnit(au); err != nil {
			t.Fatal(err)
		}
	}
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		_ = m.WriteAccessUnit(aus[i%len(aus)])
		i++
	})
	if allocs != 0 {
		t.Errorf("%.2f allocations per access unit, want 0", allocs)
	}
}

func TestMuxerDiscontinuity(t *testing.T) {
	tracks := mediatest.WithIDs(mediatest.H264(0))
	aus := mediatest.Synth(tracks, 0.2, 0, 25, false)
	jump := *aus[3]
	jump.Discontinuity, jump.DTS, jump.PTS = true, 50*90000, 50*90000
	var buf bytes.Buffer
	m := newMuxer(t, &buf, tracks)
	for _, au := range []*media.AccessUnit{aus[0], aus[1], &jump} {
		buf.Reset()
		if err := m.WriteAccessUnit(au); err != nil {
			t.Fatal(err)
		}
	}
	// Tables first, then the PES whose adaptation field flags the discontinuity.
	ts := buf.Bytes()
	p, _ := parsePacket(ts[2*PacketSize : 3*PacketSize])
	if pid := p.pid; pid != muxFirstPID || !p.pusi || !p.discontinuity {
		t.Errorf("after the tables: PID %d, start %v, discontinuity %v", pid, p.pusi, p.discontinuity)
	}
}
