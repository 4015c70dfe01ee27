package rtsp

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
)

// TestServerPublish has ffmpeg publish H.264 and AAC at a constant bitrate over each
// transport, and checks the tracks, the units and the bitrate the Stream reports.
func TestServerPublish(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"tcp", "udp"} {
		t.Run(transport, func(t *testing.T) {
			rs := startServer(t, ListenOptions{})
			c := collect(t, rs.strm)
			p := startPublisher(t, rs.url, transport, "libx264", "aac", 9)
			tracks := waitTracks(t, rs.strm, 2)
			checkAV(t, tracks, media.CodecH264, media.CodecAAC)

			// Sample the 2-second bitrate once the stream settled.
			testutil.Eventually(t, 20*time.Second, "3 s of video", func() bool { return c.count(0) >= 75 })
			var sum float64
			var n int
			for range 8 {
				time.Sleep(500 * time.Millisecond)
				if st := rs.strm.Stats(); st.Publishing {
					sum += st.Bitrate
					n++
				}
			}
			if err := p.Wait(30 * time.Second); err != nil {
				t.Fatal(err)
			}
			want := float64(srcVideoKbps + srcAudioKbps)
			got := sum / float64(n)
			t.Logf("%s: stream bitrate %.0f kbit/s over %d samples, source configured %.0f kbit/s; units %v",
				transport, got, n, want, c.counts())
			if math.Abs(got-want)/want > 0.15 {
				t.Errorf("bitrate %.0f kbit/s, want within 15%% of %.0f", got, want)
			}
			c.check(t)
			if c.count(0) < 150 || c.count(1) < 300 {
				t.Errorf("units = %v, want at least 150 video and 300 audio", c.counts())
			}
			testutil.Eventually(t, 15*time.Second, "publisher to leave", func() bool { return !rs.strm.Publishing() })
		})
	}
}

// TestServerCodecs publishes each carried codec pair and checks the tracks and units.
func TestServerCodecs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		vcodec, acodec string
		video, audio   media.Codec
	}{
		{"libx265", "aac", media.CodecH265, media.CodecAAC},
		{"libx264", "libmp3lame", media.CodecH264, media.CodecMP3},
		{"libx264", "libopus", media.CodecH264, media.CodecOpus},
		{"libx264+bf", "aac", media.CodecH264, media.CodecAAC},
		{"libx265+bf", "aac", media.CodecH265, media.CodecAAC},
	}
	for _, tc := range cases {
		t.Run(tc.vcodec+"+"+tc.acodec, func(t *testing.T) {
			rs := startServer(t, ListenOptions{})
			c := collect(t, rs.strm)
			p := startPublisher(t, rs.url, "tcp", tc.vcodec, tc.acodec, 4)
			tracks := waitTracks(t, rs.strm, 2)
			checkAV(t, tracks, tc.video, tc.audio)
			if tc.video == media.CodecH265 && len(tracks[0].Params.VPS) == 0 {
				t.Error("H.265 track without VPS")
			}
			if err := p.Wait(30 * time.Second); err != nil {
				t.Fatal(err)
			}
			testutil.Eventually(t, 15*time.Second, "publisher to leave", func() bool { return !rs.strm.Publishing() })
			c.check(t)
			got := c.counts()
			c.mu.Lock()
			reordered := c.reordered
			c.mu.Unlock()
			t.Logf("units %v, %d presented after their DTS", got, reordered)
			if strings.HasSuffix(tc.vcodec, "+bf") && reordered < 25 {
				t.Errorf("%d units with PTS after DTS, want B-frame reordering", reordered)
			}
			if got[0] < 50 || got[1] < 50 {
				t.Errorf("units = %v, want at least 50 of each track", got)
			}
		})
	}
}

// TestServerSecondPublisher checks that a second publisher is refused while one publishes,
// and that the next one is taken once the first left.
func TestServerSecondPublisher(t *testing.T) {
	t.Parallel()
	rs := startServer(t, ListenOptions{})
	c := collect(t, rs.strm)
	first := startPublisher(t, rs.url, "tcp", "libx264", "aac", 8)
	waitTracks(t, rs.strm, 2)

	second := startPublisher(t, rs.url, "tcp", "libx264", "aac", 2)
	err := second.Wait(30 * time.Second)
	if err == nil {
		t.Fatal("second publisher was not refused")
	}
	t.Logf("second publisher: %v", err)
	if !strings.Contains(err.Error(), "503") {
		t.Errorf("second publisher refused with %v, want 503", err)
	}
	if !rs.strm.Publishing() {
		t.Error("first publisher lost its place")
	}
	if err := first.Wait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 15*time.Second, "first publisher to leave", func() bool { return !rs.strm.Publishing() })

	third := startPublisher(t, rs.url, "udp", "libx264", "aac", 3)
	waitTracks(t, rs.strm, 2)
	if err := third.Wait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	if d := rs.strm.Discontinuities(); d != 1 {
		t.Errorf("discontinuities = %d, want 1", d)
	}
	c.check(t)
}

// TestServerReaders has ffmpeg read the published stream from the server over each transport
// into an mp4 file and probes it.
func TestServerReaders(t *testing.T) {
	t.Parallel()
	rs := startServer(t, ListenOptions{})
	p := startPublisher(t, rs.url, "tcp", "libx264", "aac", 14)
	waitTracks(t, rs.strm, 2)
	for _, transport := range []string{"tcp", "udp"} {
		t.Run(transport, func(t *testing.T) {
			out := recordRTSP(t, rs.url, transport, 3)
			checkProbe(t, ffprobe(t, out, true), "h264", "aac")
		})
	}
	p.Interrupt(10 * time.Second)
}

// checkProbe checks ffprobe's streams: the video at the source's size and the audio, with
// frames in each.
func checkProbe(t testing.TB, streams []probeStream, vcodec, acodec string) {
	t.Helper()
	var v, a *probeStream
	for i := range streams {
		switch streams[i].CodecType {
		case "video":
			v = &streams[i]
		case "audio":
			a = &streams[i]
		}
	}
	if v == nil || a == nil {
		t.Fatalf("streams = %+v, want video and audio", streams)
		return
	}
	if v.CodecName != vcodec || v.Width != srcWidth || v.Height != srcHeight {
		t.Errorf("video = %s %dx%d, want %s %dx%d", v.CodecName, v.Width, v.Height, vcodec, srcWidth, srcHeight)
	}
	if a.CodecName != acodec || a.SampleRate != "48000" {
		t.Errorf("audio = %s %s Hz, want %s 48000 Hz", a.CodecName, a.SampleRate, acodec)
	}
	if n, _ := strconv.Atoi(v.NbReadFrames); n < 25 {
		t.Errorf("video frames = %s, want at least 25", v.NbReadFrames)
	}
	if n, _ := strconv.Atoi(a.NbReadFrames); n < 50 {
		t.Errorf("audio frames = %s, want at least 50", a.NbReadFrames)
	}
	t.Logf("probe: video %s %dx%d %s frames, audio %s %s Hz %s frames", v.CodecName, v.Width, v.Height,
		v.NbReadFrames, a.CodecName, a.SampleRate, a.NbReadFrames)
}

// TestServerStaleAnnounce checks that a client that announced but never records holds the
// publisher's place only for ReadTimeout.
func TestServerStaleAnnounce(t *testing.T) {
	t.Parallel()
	testutil.RequireFFmpeg(t)
	rs := startServer(t, ListenOptions{ReadTimeout: 2 * time.Second})
	addr := rs.srv.Addr().String()
	sdp := "v=0\r\no=- 0 0 IN IP4 127.0.0.1\r\ns=x\r\nt=0 0\r\nm=video 0 RTP/AVP 96\r\n" +
		"a=rtpmap:96 H264/90000\r\na=fmtp:96 packetization-mode=1\r\na=control:trackID=0\r\n"
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := fmt.Sprintf("ANNOUNCE rtsp://%s/live RTSP/1.0\r\nCSeq: 1\r\nContent-Type: application/sdp\r\n"+
		"Content-Length: %d\r\n\r\n%s", addr, len(sdp), sdp)
	if _, err := conn.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.Contains(line, "200") {
		t.Fatalf("ANNOUNCE answered %q, %v", line, err)
	}
	early := startPublisher(t, rs.url, "tcp", "libx264", "aac", 2)
	if err := early.Wait(30 * time.Second); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("publisher while the claim is fresh: %v, want 503", err)
	}
	time.Sleep(2 * time.Second)
	late := startPublisher(t, rs.url, "tcp", "libx264", "aac", 2)
	waitTracks(t, rs.strm, 2)
	if err := late.Wait(30 * time.Second); err != nil {
		t.Errorf("publisher after the claim expired: %v", err)
	}
}

// TestServerSockets checks Listen's and NewServer's handling of ports.
func TestServerSockets(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	strm := stream.New("x", stream.Options{Log: testLog(t)})
	defer strm.Close()
	if err := Listen(context.Background(), strm, ListenOptions{Addr: ln.Addr().String(), Log: testLog(t)}); err == nil ||
		!strings.Contains(err.Error(), ln.Addr().String()) {
		t.Errorf("Listen on a busy port = %v, want an error naming it", err)
	}
	if _, err := NewServer(ListenOptions{Addr: "127.0.0.1:0", RTPPort: 5001}); err == nil {
		t.Error("odd RTP port accepted")
	}

	srv, err := NewServer(ListenOptions{Addr: "127.0.0.1:0", RTPPort: 0, Log: testLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	rtpPort, rtcpPort := srv.UDPPorts()
	if rtpPort%2 != 0 || rtcpPort != rtpPort+1 {
		t.Errorf("UDP ports %d, %d: want an even RTP port and the next", rtpPort, rtcpPort)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, strm) }()
	testutil.Eventually(t, 10*time.Second, "the server to answer", func() bool {
		c, err := net.Dial("tcp", srv.Addr().String())
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after cancel = %v, want nil", err)
	}
	if err := srv.Run(context.Background(), strm); err == nil {
		t.Error("a second Run did not fail")
	}
	// The ports are free again.
	again, err := NewServer(ListenOptions{Addr: srv.Addr().String(), RTPPort: rtpPort})
	if err != nil {
		t.Fatalf("ports not released: %v", err)
	}
	again.Close()

	noUDP, err := NewServer(ListenOptions{Addr: "127.0.0.1:0", DisableUDP: true})
	if err != nil {
		t.Fatal(err)
	}
	defer noUDP.Close()
	if p, _ := noUDP.UDPPorts(); p != 0 {
		t.Errorf("UDP port %d with UDP disabled", p)
	}
}
