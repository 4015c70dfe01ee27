package mpegts

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
)

// interleaveByPID reorders a muxed stream so that the packets of each PID alternate: every
// PES is then open at once. Packets before the first PES (PAT, PMT) stay first.
func interleaveByPID(b []byte) []byte {
	var head []byte
	byPID := map[uint16][][]byte{}
	var order []uint16
	for off := 0; off+PacketSize <= len(b); off += PacketSize {
		p := b[off : off+PacketSize]
		pid := binary.BigEndian.Uint16(p[1:]) & 0x1fff
		if pid < 0x20 || (len(byPID) == 0 && p[1]&0x40 == 0) {
			head = append(head, p...)
			continue
		}
		if _, ok := byPID[pid]; !ok {
			order = append(order, pid)
		}
		byPID[pid] = append(byPID[pid], p)
	}
	out := head
	for i := 0; ; i++ {
		more := false
		for _, pid := range order {
			if i < len(byPID[pid]) {
				out = append(out, byPID[pid][i]...)
				more = true
			}
		}
		if !more {
			return out
		}
	}
}

// pesCapCases are streams that make the demuxer hold much, shared with the fuzz seeds (cut
// to their first packets there).
type pesCapCase struct {
	name    string
	streams int // H.264 streams, one key frame each
	size    int // payload of each key frame, bytes
	// dropped is how many PES the caps must drop, at least.
	dropped int64
}

var pesCapCases = []pesCapCase{
	{name: "one PES over MaxPESSize", streams: 1, size: MaxPESSize + 1, dropped: 1},
	{name: "one PES at 6 MiB", streams: 1, size: 6 << 20, dropped: 0},
	{name: "eight PES of 3 MiB open at once", streams: 8, size: 3 << 20, dropped: 2},
	{name: "four PES of 7 MiB open at once", streams: 4, size: 7 << 20, dropped: 2},
}

func (tc pesCapCase) stream(t testing.TB) []byte {
	rng := rand.New(rand.NewPCG(5, 6))
	var tracks []media.Track
	var aus []*media.AccessUnit
	for range tc.streams {
		tracks = append(tracks, mediatest.H264(0))
	}
	tracks = mediatest.WithIDs(tracks...)
	for _, trk := range tracks {
		au := mediatest.VideoUnit(rng, trk, true, true, tc.size)
		au.PTS, au.DTS = 90000, 90000
		aus = append(aus, au)
	}
	return interleaveByPID(muxAll(t, tracks, aus))
}

// TestDemuxPESCaps pushes streams whose PES grow past MaxPESSize or, together, past
// maxHeldPES: the demuxer drops and counts them, never holds more than maxHeldPES in its
// buffers, and keeps the PES within the caps whole.
func TestDemuxPESCaps(t *testing.T) {
	for _, tc := range pesCapCases {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.stream(t)
			d := NewDemuxer(nil)
			most := 0
			for off := 0; off < len(in); off += 100 * PacketSize {
				if _, err := d.Write(in[off:min(off+100*PacketSize, len(in))]); err != nil {
					t.Fatal(err)
				}
				most = max(most, d.pesHeld)
				if d.pesHeld > maxHeldPES {
					t.Fatalf("holding %d bytes of PES, over %d", d.pesHeld, maxHeldPES)
				}
			}
			d.Flush()
			st := d.Stats()
			if st.DroppedPES < tc.dropped {
				t.Fatalf("dropped %d PES, want at least %d", st.DroppedPES, tc.dropped)
			}
			// What was not dropped was reassembled whole and handed to the codec (whether its
			// unit comes out is the probe's business): its buffer holds it still.
			whole := int64(tc.streams) - st.DroppedPES
			if tc.size > MaxPESSize {
				whole = 0
			}
			var got int64
			for _, s := range d.streams {
				if len(s.pes) > tc.size && !s.open {
					got++
				}
			}
			if got != whole {
				t.Fatalf("%d PES reassembled whole, want %d (dropped %d of %d)", got, whole, st.DroppedPES, tc.streams)
			}
			t.Logf("%d streams of %d bytes: %d PES dropped, most held %d bytes", tc.streams, tc.size, st.DroppedPES, most)
		})
	}
}

// FuzzDemuxPESCaps pushes arbitrary bytes after the start of a stream with many large PES:
// the buffers never pass maxHeldPES.
func FuzzDemuxPESCaps(f *testing.F) {
	for _, tc := range pesCapCases[2:] {
		in := tc.stream(f)
		f.Add(in[:min(len(in), 64*PacketSize)])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := NewDemuxer(nil)
		for i := 0; i < len(data); i += 188 * 7 {
			_, _ = d.Write(data[i:min(i+188*7, len(data))])
			if d.pesHeld > maxHeldPES || d.pesHeld < 0 {
				t.Fatalf("holding %d bytes of PES", d.pesHeld)
			}
			for {
				if _, err := d.Read(); err != nil {
					break
				}
			}
		}
		d.Flush()
	})
}
