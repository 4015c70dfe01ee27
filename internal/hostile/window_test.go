package hostile

import (
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/packager/mpegts"
	"github.com/sluicemedia/sluice/packager/segment"
)

// The slow-timestamp flood (issue 13, item 2).
const (
	// slowFactor is how many times slower than real time the flood's timestamps advance.
	slowFactor = 1000
	// floodFor is how long the flood is sent, at full speed.
	floodFor = 15 * time.Second
	// floodClipKbps is the bitrate of the clip the flood repeats: 8 Mbit/s makes video units of
	// about 40 KB.
	floodClipKbps = 8000
	// datagram is the flood's UDP payload: 7 TS packets, as encoders send.
	datagram = 7 * mpegts.PacketSize
	// minFloodBytes is the least media the flood must bring into the player's stream for the
	// case to mean anything: ten times what the segmenter may keep of it (its byte rate over
	// the media time the flood covers, about a second with the burst).
	minFloodBytes = 10 * segment.DefaultByteRate
)

// Documented budgets of a player (docs/limits.md, "Media budgets"), for playerBody's
// 1 s fragments and 6 s window.
const (
	// playerWindowBytes is the player window's budget: ByteRate × (max(window, 3 × fragment) +
	// 3 × fragment) = 12.5 MB × 9 s.
	playerWindowBytes = segment.DefaultByteRate * (6 + 3)
	// tsDemuxBytes is the TS demuxer's reassembly cap (maxHeldPES, 16 MiB) and its probe
	// (probeMaxBytes, 8 MiB).
	tsDemuxBytes = (16 + 8) << 20
	// playerBytes is what a player fed by a TS input may hold: its window, one open segment
	// (DefaultSegmentBytes), its reader's queue and the GOP kept for new readers
	// (DefaultQueueBytes each), and the demuxer.
	playerBytes = playerWindowBytes + segment.DefaultSegmentBytes + 2*stream.DefaultQueueBytes + tsDemuxBytes
)

// slowFlood sends clip's units again and again as MPEG-TS datagrams to addr, with timestamps
// that advance slowFactor times slower than the clip's, as fast as the socket takes them,
// until d has passed. It returns the bytes sent.
func slowFlood(t *testing.T, addr string, tracks []media.Track, units []*media.AccessUnit, d time.Duration) int64 {
	t.Helper()
	conn, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	mux, err := mpegts.NewMuxer(nil, tracks)
	if err != nil {
		t.Fatal(err)
	}
	// One pass of the clip in each track's ticks, so that passes follow each other.
	span := make([]int64, len(tracks))
	first := make([]int64, len(tracks))
	seen := make([]bool, len(tracks))
	for _, u := range units {
		if !seen[u.Track] {
			first[u.Track], seen[u.Track] = u.DTS, true
		}
		span[u.Track] = max(span[u.Track], u.DTS-first[u.Track])
	}
	for i, trk := range tracks {
		span[i] += int64(trk.ClockRate) / 10 // the last unit's duration, and a gap
	}
	var sent int64
	var buf, pending []byte
	end := time.Now().Add(d)
	for pass := int64(0); time.Now().Before(end); pass++ {
		for _, u := range units {
			au := *u
			orig := u.DTS - first[u.Track] + pass*span[u.Track]
			au.DTS = first[u.Track] + orig/slowFactor
			au.PTS = au.DTS + (u.PTS-u.DTS)/slowFactor
			buf, err = mux.AppendAccessUnit(buf[:0], &au)
			if err != nil {
				t.Fatalf("mux: %v", err)
			}
			pending = append(pending, buf...)
			off := 0
			for ; len(pending)-off >= datagram; off += datagram {
				if n, err := conn.Write(pending[off : off+datagram]); err == nil {
					sent += int64(n)
				}
			}
			pending = pending[:copy(pending, pending[off:])]
		}
		if pass%10 == 9 && time.Now().After(end) {
			break
		}
	}
	return sent
}

// bytesIn is the payload a process's stream has taken in (getStat bytes_in).
func (s *server) bytesIn(module, id string) int64 {
	s.t.Helper()
	var all []struct {
		ID      string `json:"id"`
		BytesIn int64  `json:"bytes_in"`
	}
	s.call("/api/"+module+"/getStat", nil, http.StatusOK, &all)
	for _, st := range all {
		if st.ID == id {
			return st.BytesIn
		}
	}
	s.t.Fatalf("%s getStat has no %s", module, id)
	return 0
}

// testPlayerWindowBytes: a player fed by a UDP listen input is sent, at full speed for 15 s,
// MPEG-TS whose timestamps advance 1 000 times slower than real time. Before issue 13 the
// player's window was bounded by media time only, and held everything (1.9 GB sent in 20 s
// covered 6.9 s of media; 1.2 GiB of heap stayed). Now the segmenter's byte rate and the
// window's byte budget hold, and the cause is logged. Then a real publisher sends to the same
// input and the same player plays it.
func testPlayerWindowBytes(t *testing.T) {
	clip := filepath.Join(t.TempDir(), "clip.ts")
	testutil.MakeClip(t, clip, 2, floodClipKbps)
	tracks, units, err := mpegts.ReadFile(clip)
	if err != nil {
		t.Fatal(err)
	}

	s := start(t, options{})
	pl := s.listenPlayer("slow-flood", "INPUT_TYPE_UDP_LISTEN", "UDP")
	vod, vodPort, udpPort := pl.id, pl.port, pl.inPort

	b := budget(playerBytes, fmt.Sprintf("a player's documented budgets: window %d MB, segment %d MiB, reader queue and GOP %d MiB each, TS demuxer %d MiB",
		int64(playerWindowBytes)/1e6, segment.DefaultSegmentBytes>>20, stream.DefaultQueueBytes>>20, tsDemuxBytes>>20))
	in0 := s.bytesIn("vod", vod)
	w := s.watch()
	sent := slowFlood(t, fmt.Sprintf("127.0.0.1:%d", udpPort), tracks, units, floodFor)
	f := w.stop()
	in := s.bytesIn("vod", vod) - in0
	t.Logf("flood: %d MB sent in %v with timestamps %d× slower than real time; %d MB of media reached the player's stream",
		sent/1e6, floodFor, slowFactor, in/1e6)
	f.check(t, s, b)
	if in < minFloodBytes {
		t.Errorf("only %d MB of the flood reached the player's stream, want %d MB or more for the case to mean anything", in/1e6, int64(minFloodBytes)/1e6)
	}
	var hit []string
	for _, l := range s.logged("budget=") {
		if i := strings.Index(l, "budget="); i >= 0 {
			name, _, _ := strings.Cut(l[i:], " ")
			if !slices.Contains(hit, name) {
				hit = append(hit, name)
			}
		}
	}
	t.Logf("budgets the server logged as hit: %v", hit)
	if len(hit) == 0 {
		t.Errorf("the server logged no budget as hit: the flood did not reach a byte budget")
	}

	publish(t, udpOut(udpPort)...)
	playHLS(t, vod, vodPort)
}
