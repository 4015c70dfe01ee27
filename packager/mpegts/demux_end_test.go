package mpegts

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
)

// endCase is a stream whose last unit is cut or whole, and what Flush and Cut make of it.
type endCase struct {
	name string
	// last is the stream's last unit; cut, when set, keeps that fraction of its bytes.
	last func(rng *rand.Rand, tracks []media.Track, prev *media.AccessUnit) *media.AccessUnit
	cut  float64
	// flushed and cutOff tell whether the last unit comes out after Flush and after Cut.
	flushed, cutOff bool
}

var endCases = []endCase{
	{name: "video without a length, whole", last: bigVideo, flushed: true, cutOff: false},
	{name: "video without a length, cut", last: bigVideo, cut: 0.5, flushed: true, cutOff: false},
	{name: "video with a length, whole", last: smallVideo, flushed: true, cutOff: true},
	{name: "video with a length, cut", last: smallVideo, cut: 0.5, flushed: false, cutOff: false},
	{name: "audio, whole", last: lastAudio, flushed: true, cutOff: true},
	{name: "audio, cut", last: lastAudio, cut: 0.3, flushed: false, cutOff: false},
}

// bigVideo is a video unit over 64 KiB: its PES has no length (ISO/IEC 13818-1 2.4.3.7).
func bigVideo(rng *rand.Rand, tracks []media.Track, prev *media.AccessUnit) *media.AccessUnit {
	au := mediatest.VideoUnit(rng, tracks[0], true, true, 70000)
	au.DTS, au.PTS = prev.DTS+3600, prev.DTS+3600
	return au
}

// smallVideo is a video unit whose PES declares its length.
func smallVideo(rng *rand.Rand, tracks []media.Track, prev *media.AccessUnit) *media.AccessUnit {
	au := mediatest.VideoUnit(rng, tracks[0], true, true, 3000)
	au.DTS, au.PTS = prev.DTS+3600, prev.DTS+3600
	return au
}

// lastAudio is an AAC frame a second after the stream's units.
func lastAudio(rng *rand.Rand, tracks []media.Track, prev *media.AccessUnit) *media.AccessUnit {
	dts := media.Rescale(prev.DTS, 90000, 48000) + 48000
	return &media.AccessUnit{Track: 1, Key: true, PTS: dts, DTS: dts, Payload: [][]byte{mediatest.NoZeros(rng, 700)}}
}

// endStream returns a stream of two seconds of H.264 and AAC ending with the case's unit, cut
// as the case says, and how many units precede that last one.
func endStream(t *testing.T, tc endCase) ([]byte, int) {
	t.Helper()
	tracks := mediatest.WithIDs(mediatest.H264(0), mediatest.AAC(0))
	aus := mediatest.Synth(tracks, 2, 0, 25, false)
	var lastVideo *media.AccessUnit
	for _, au := range aus {
		if au.Track == 0 {
			lastVideo = au
		}
	}
	rng := rand.New(rand.NewPCG(7, 8))
	before := muxAll(t, tracks, aus)
	whole := muxAll(t, tracks, append(aus, tc.last(rng, tracks, lastVideo)))
	if !bytes.HasPrefix(whole, before) {
		t.Fatal("the muxer's output for fewer units is not a prefix")
	}
	if tc.cut > 0 {
		// Keep that fraction of the last unit's packets (tables and PCR packets aside).
		var pes []int
		for off := len(before); off < len(whole); off += PacketSize {
			p, err := parsePacket(whole[off : off+PacketSize])
			if err == nil && len(p.payload) > 0 && (!p.pusi || bytes.HasPrefix(p.payload, []byte{0, 0, 1})) {
				pes = append(pes, off)
			}
		}
		keep := max(1, int(float64(len(pes))*tc.cut))
		if keep >= len(pes) {
			t.Fatalf("the last unit spans %d packets: too few to cut", len(pes))
		}
		whole = whole[:pes[keep]]
	}
	return whole, len(aus)
}

// drain reads every unit a pushed Demuxer holds.
func drain(t *testing.T, d *Demuxer) int {
	t.Helper()
	return len(readUntil(t, d, ErrNeedMore))
}

// TestDemuxEnd: at Flush (a stream that ended whole) a PES without a length ends with the
// stream and is emitted, one shorter than its declared length is dropped; at Cut (a stream
// cut off) every open PES is dropped. Dropped ones are counted, never emitted.
func TestDemuxEnd(t *testing.T) {
	for _, tc := range endCases {
		t.Run(tc.name, func(t *testing.T) {
			in, before := endStream(t, tc)
			for _, mode := range []struct {
				name string
				end  func(*Demuxer)
				want bool
			}{{"Flush", (*Demuxer).Flush, tc.flushed}, {"Cut", (*Demuxer).Cut, tc.cutOff}} {
				d := NewDemuxer(nil)
				_, _ = d.Write(in)
				n := drain(t, d)
				mode.end(d)
				n += drain(t, d)
				want, dropped := before, int64(1)
				if mode.want {
					want, dropped = before+1, 0
				}
				if n != want {
					t.Errorf("%s: %d units, want %d", mode.name, n, want)
				}
				// Only the last PES can be open: every earlier one ended at the next of its stream.
				if got := d.Stats().IncompletePES; got != dropped {
					t.Errorf("%s: IncompletePES %d, want %d", mode.name, got, dropped)
				}
			}
		})
	}
}

// errReader returns its bytes, then err.
type errReader struct {
	b   []byte
	err error
}

func (r *errReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, r.err
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

// TestDemuxReaderEnd: a reader that ends with io.EOF ended a whole stream (Flush); one that
// fails otherwise cut it (Cut).
func TestDemuxReaderEnd(t *testing.T) {
	tc := endCases[0] // a video PES without a length: the two ends differ
	in, before := endStream(t, tc)
	lost := errors.New("connection reset")
	for _, c := range []struct {
		err  error
		want int
	}{{io.EOF, before + 1}, {lost, before}} {
		d := NewDemuxer(&errReader{b: in, err: c.err})
		n := 0
		var err error
		for err == nil {
			if _, err = d.Read(); err == nil {
				n++
			}
		}
		if !errors.Is(err, c.err) {
			t.Errorf("%v: Read ended with %v", c.err, err)
		}
		if n != c.want {
			t.Errorf("%v: %d units, want %d", c.err, n, c.want)
		}
	}
}

// TestDemuxShortPESBeforeNext: a PES shorter than its declared length when the next one of
// its stream starts lost a packet without a continuity gap; it is dropped, not emitted.
func TestDemuxShortPESBeforeNext(t *testing.T) {
	tracks := mediatest.WithIDs(mediatest.H264(0), mediatest.AAC(0))
	aus := mediatest.Synth(tracks, 1, 0, 25, false)
	in := muxAll(t, tracks, aus)
	// Remove the second packet of the first audio PES that spans three packets or more, and
	// renumber that stream's continuity counters after it so that no gap shows.
	var pid uint16
	removed := -1
	for off := 0; off < len(in) && removed < 0; off += PacketSize {
		p, err := parsePacket(in[off : off+PacketSize])
		if err != nil || !p.pusi || len(p.payload) < 9 || p.payload[3] != 0xc0 {
			continue // not the start of an audio PES (stream id 0xc0)
		}
		if n := int(p.payload[4])<<8 | int(p.payload[5]); n > 2*(PacketSize-4) {
			pid, removed = p.pid, off+PacketSize
		}
	}
	if removed < 0 {
		t.Fatal("no audio PES over two packets")
	}
	out := append(append([]byte{}, in[:removed]...), in[removed+PacketSize:]...)
	for off := removed; off < len(out); off += PacketSize {
		if pidOf(out[off:]) == pid {
			out[off+3] = out[off+3]&0xf0 | (out[off+3]-1)&0x0f
		}
	}
	d := NewDemuxer(nil)
	_, _ = d.Write(out)
	d.Flush()
	n := drain(t, d)
	st := d.Stats()
	if st.CCErrors != 0 || st.DroppedPES != 1 || n != len(aus)-1 {
		t.Errorf("%d units of %d, %d PES dropped, %d CC errors; want one PES dropped without CC errors", n, len(aus), st.DroppedPES, st.CCErrors)
	}
}

// pidOf reads the PID of the packet that starts b.
func pidOf(b []byte) uint16 { return uint16(b[1]&0x1f)<<8 | uint16(b[2]) }
