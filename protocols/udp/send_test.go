package udp

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
	"github.com/sluicemedia/sluice/packager/mpegts"
)

// startSend runs send (Send or SendRTP) from a new reader of s until the test ends.
func startSend(t *testing.T, s *stream.Stream, url string, fn func(context.Context, *stream.Reader, []media.Track, SendOptions) error) {
	t.Helper()
	r, err := s.NewReader("send")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		defer r.Close()
		waitTracks(ctx, s)
		done <- fn(ctx, r, s.Tracks(), SendOptions{URL: url})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("send: %v", err)
		}
	})
}

// waitTracks waits until s has tracks.
func waitTracks(ctx context.Context, s *stream.Stream) {
	for {
		tracks, ch := s.WatchTracks()
		if len(tracks) > 0 {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

// receiveFFmpeg runs ffmpeg reading url for 5 s of media into a file and checks it holds
// H.264 and AAC.
func receiveFFmpeg(t *testing.T, inURL string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.ts")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := streamtest.RunFFmpeg(ctx, t, "-hide_banner", "-loglevel", "error", "-nostdin", "-y",
		"-i", inURL, "-t", "5", "-c", "copy", "-f", "mpegts", out); err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatal("ffmpeg did not get 5 s of media within 60 s")
	}
	streamtest.CheckReceivedAV(t, out)
}

func TestSendFFmpeg(t *testing.T) {
	testutil.RequireFFmpeg(t)
	t.Parallel()
	s := stream.New("udp-send", stream.Options{})
	streamtest.PlayCBR(t, s)
	port := testutil.FreePort(t)
	startSend(t, s, fmt.Sprintf("udp://127.0.0.1:%d?pkt_size=1316", port), Send)
	receiveFFmpeg(t, fmt.Sprintf("udp://127.0.0.1:%d", port))
}

// freeRTPPort returns an even port whose successor (RTCP) was free too.
func freeRTPPort(t *testing.T) int {
	for range 100 {
		p := testutil.FreePort(t)
		if p%2 == 1 || p == 65534 {
			continue
		}
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: p + 1})
		if err == nil {
			c.Close()
			return p
		}
	}
	t.Fatal("no free RTP port pair")
	return 0
}

func TestSendRTPFFmpeg(t *testing.T) {
	testutil.RequireFFmpeg(t)
	t.Parallel()
	s := stream.New("rtp-send", stream.Options{})
	streamtest.PlayCBR(t, s)
	port := freeRTPPort(t)
	startSend(t, s, fmt.Sprintf("rtp://127.0.0.1:%d", port), SendRTP)
	receiveFFmpeg(t, fmt.Sprintf("rtp://127.0.0.1:%d", port))
}

// datagram is what the test receiver got, and when.
type datagram struct {
	at time.Time
	b  []byte
}

// receiveAll reads datagrams on conn until quiet for the given time.
func receiveAll(t *testing.T, conn *net.UDPConn, quiet time.Duration) []datagram {
	t.Helper()
	var got []datagram
	buf := make([]byte, maxDatagram)
	deadline := 30 * time.Second // for the first one
	for {
		_ = conn.SetReadDeadline(time.Now().Add(deadline))
		n, err := conn.Read(buf)
		if err != nil {
			return got
		}
		got = append(got, datagram{at: time.Now(), b: slices.Clone(buf[:n])})
		deadline = quiet
	}
}

// TestSendPacing publishes 2 sessions of 2 s of media at once, with the same timestamps, and
// checks that Send spreads them over their duration (a burst under maxLag is paced) and that the TS it sends has increasing
// timestamps across the discontinuity; in RTP mode also the RTP headers.
func TestSendPacing(t *testing.T) {
	tracks, aus := streamtest.ReadTS(t, streamtest.CBRFile(t, 2, "mpegts"))
	for _, rtp := range []bool{false, true} {
		t.Run(fmt.Sprintf("rtp=%v", rtp), func(t *testing.T) {
			t.Parallel()
			conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetReadBuffer(8 << 20)
			s := stream.New("pacing", stream.Options{QueueSize: 2048})
			r, err := s.NewReader("send")
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for range 2 {
				if err := streamtest.Play(context.Background(), s, tracks, aus, 0, 1); err != nil {
					t.Fatal(err)
				}
			}
			url := fmt.Sprintf("udp://%s", conn.LocalAddr())
			fn := Send
			if rtp {
				url, fn = fmt.Sprintf("rtp://%s", conn.LocalAddr()), SendRTP
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- fn(ctx, r, tracks, SendOptions{URL: url}) }()
			got := receiveAll(t, conn, 2*time.Second)
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			ts := checkDatagrams(t, got, rtp)
			checkPacing(t, got, 4*time.Second)
			checkContinuous(t, ts, 2*len(aus))
		})
	}
}

// checkDatagrams checks sizes (and RTP headers) and returns the TS bytes.
func checkDatagrams(t *testing.T, got []datagram, rtp bool) []byte {
	t.Helper()
	var ts []byte
	var seq uint16
	var ssrc uint32
	for i, d := range got {
		b := d.b
		if rtp {
			if len(b) < rtpHeaderSize || b[0] != 0x80 || b[1] != rtpPayloadMP2T {
				t.Fatalf("datagram %d: RTP header % x", i, b[:min(len(b), 12)])
			}
			s, id := binary.BigEndian.Uint16(b[2:]), binary.BigEndian.Uint32(b[8:])
			if i > 0 && (s != seq+1 || id != ssrc) {
				t.Fatalf("datagram %d: seq %d after %d, ssrc %x after %x", i, s, seq, id, ssrc)
			}
			seq, ssrc = s, id
			b = b[rtpHeaderSize:]
		}
		if len(b) != DefaultPktSize {
			t.Fatalf("datagram %d: %d TS bytes, want %d", i, len(b), DefaultPktSize)
		}
		ts = append(ts, b...)
	}
	return ts
}

// checkPacing checks that no 500 ms window carried more than 20 % of the bytes of media
// lasting about span.
func checkPacing(t *testing.T, got []datagram, span time.Duration) {
	t.Helper()
	total := 0
	for _, d := range got {
		total += len(d.b)
	}
	took := got[len(got)-1].at.Sub(got[0].at)
	worst, j, win := 0, 0, 0
	for i := range got {
		win += len(got[i].b)
		for got[i].at.Sub(got[j].at) > 500*time.Millisecond {
			win -= len(got[j].b)
			j++
		}
		worst = max(worst, win)
	}
	share := float64(worst) / float64(total)
	t.Logf("%d datagrams, %d bytes over %s; busiest 500 ms carried %.1f %%", len(got), total, took, 100*share)
	if took < span*8/10 {
		t.Errorf("sent %s of media in %s", span, took)
	}
	if share > 0.2*float64(10*time.Second)/float64(span) {
		t.Errorf("busiest 500 ms carried %.1f %% of the bytes", 100*share)
	}
}

// checkContinuous demuxes what was sent: every unit, DTS increasing per track throughout.
func checkContinuous(t *testing.T, ts []byte, want int) {
	t.Helper()
	d := mpegts.NewDemuxer(nil)
	_, _ = d.Write(ts)
	d.Flush()
	tracks, err := d.Tracks()
	if err != nil {
		t.Fatal(err)
	}
	last := map[int]int64{}
	n := 0
	for {
		au, err := d.Read()
		if err != nil {
			break
		}
		if l, ok := last[au.Track]; ok && au.DTS <= l {
			t.Fatalf("unit %d of track %d: DTS %d after %d", n, au.Track, au.DTS, l)
		}
		last[au.Track] = au.DTS
		n++
	}
	streamtest.CheckCBRTracks(t, tracks)
	if n < want-5 {
		t.Errorf("received %d units, sent %d", n, want)
	}
}
