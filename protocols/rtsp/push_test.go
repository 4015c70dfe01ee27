package rtsp

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bluenviron/gortsplib/v4/pkg/description"
	"github.com/pion/rtp"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
)

// TestPush has ffmpeg publish to one Server, pushes that stream to a second Server with
// credentials, checks what the second one received, and has ffmpeg read it from there.
func TestPush(t *testing.T) {
	t.Parallel()
	src := startServer(t, ListenOptions{})
	dst := startServer(t, ListenOptions{User: "pub", Password: "secret"})
	c := collect(t, dst.strm)
	p := startPublisher(t, src.url, "tcp", "libx264", "aac", 14)
	tracks := waitTracks(t, src.strm, 2)
	r, err := src.strm.NewReader("push")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	url := strings.Replace(dst.url, "rtsp://", "rtsp://pub:secret@", 1)
	go func() { errc <- Push(ctx, r, tracks, PushOptions{URL: url, Log: testLog(t)}) }()
	defer func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("Push = %v, want nil after cancel", err)
		}
	}()

	checkAV(t, waitTracks(t, dst.strm, 2), media.CodecH264, media.CodecAAC)
	testutil.Eventually(t, 20*time.Second, "2 s of pushed video", func() bool { return c.count(0) >= 50 })
	readURL := strings.Replace(dst.url, "rtsp://", "rtsp://pub:secret@", 1)
	out := recordRTSP(t, readURL, "tcp", 4)
	checkProbe(t, ffprobe(t, out, true), "h264", "aac")
	st := dst.strm.Stats()
	t.Logf("pushed stream: %.0f kbit/s, %.1f fps, units %v", st.Bitrate, st.FPS, c.counts())
	p.Interrupt(10 * time.Second)
	c.check(t)
}

// TestPushEndsWithStream checks that Push returns nil when the stream closes, and an error
// when the server refuses it.
func TestPushEndsWithStream(t *testing.T) {
	t.Parallel()
	dst := startServer(t, ListenOptions{})
	strm := stream.New("src", stream.Options{Log: testLog(t)})
	pub, err := strm.Publish()
	if err != nil {
		t.Fatal(err)
	}
	tracks := []media.Track{{ID: 0, Codec: media.CodecOpus, ClockRate: 48000, Params: media.Params{SampleRate: 48000, Channels: 2}}}
	if err := pub.SetTracks(tracks); err != nil {
		t.Fatal(err)
	}
	r, err := strm.NewReader("push")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	errc := make(chan error, 1)
	go func() { errc <- Push(context.Background(), r, tracks, PushOptions{URL: dst.url, Log: testLog(t)}) }()
	testutil.Eventually(t, 20*time.Second, "the push to record", dst.strm.Publishing)
	strm.Close()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("Push = %v, want nil once the stream closed", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Push did not return after the stream closed")
	}

	// Credentials are asked and none given.
	auth := startServer(t, ListenOptions{User: "u", Password: "p"})
	strm2 := stream.New("src2", stream.Options{Log: testLog(t)})
	defer strm2.Close()
	r2, err := strm2.NewReader("push")
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := Push(ctx, r2, tracks, PushOptions{URL: auth.url, Log: testLog(t)}); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("Push without credentials = %v, want 401", err)
	}
}

// capture records the packets a pusher writes.
type capture struct {
	pkts map[*description.Media][]*rtp.Packet
}

func (c *capture) WritePacketRTP(m *description.Media, pkt *rtp.Packet) error {
	c.pkts[m] = append(c.pkts[m], pkt)
	return nil
}

// TestPusherDiscontinuity checks that RTP timestamps keep increasing when the stream's
// publisher comes back with timestamps from zero, and that other tracks end the push.
func TestPusherDiscontinuity(t *testing.T) {
	strm := stream.New("src", stream.Options{Log: testLog(t)})
	defer strm.Close()
	tracks := []media.Track{
		{ID: 0, Codec: media.CodecH264, ClockRate: 90000, Params: media.Params{SPS: testSPS, PPS: testPPS}},
		{ID: 1, Codec: media.CodecOpus, ClockRate: 48000, Params: media.Params{SampleRate: 48000, Channels: 2}},
	}
	r, err := strm.NewReader("push")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	capt := &capture{pkts: map[*description.Media][]*rtp.Packet{}}
	p := pusher{c: capt, tracks: tracks, log: testLog(t)}
	for _, tr := range tracks {
		o, err := newOutTrack(tr, 96)
		if err != nil {
			t.Fatal(err)
		}
		p.outs = append(p.outs, o)
	}
	session := func(units int, other bool) error {
		pub, err := strm.Publish()
		if err != nil {
			t.Fatal(err)
		}
		defer pub.Close()
		trs := tracks
		if other {
			trs = tracks[:1]
		}
		if err := pub.SetTracks(trs); err != nil {
			t.Fatal(err)
		}
		for i := range units {
			v := &media.AccessUnit{Track: 0, PTS: int64(i) * 3600, DTS: int64(i) * 3600, Key: i == 0,
				Payload: [][]byte{testSPS, testPPS, {0x65, 0x88, 0x84, 0x00}}}
			if i > 0 {
				v.Payload = [][]byte{{0x41, 0x9a, 0x02}}
			}
			if err := pub.Write(v); err != nil {
				t.Fatal(err)
			}
			if !other {
				a := &media.AccessUnit{Track: 1, PTS: int64(i) * 1920, DTS: int64(i) * 1920, Key: true, Payload: [][]byte{{0xfc, 0x01, 0x02}}}
				if err := pub.Write(a); err != nil {
					t.Fatal(err)
				}
			}
		}
		n := units
		if !other {
			n *= 2
		}
		for range n {
			au, err := r.Read(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if err := p.write(r, au); err != nil {
				return err
			}
		}
		return nil
	}
	for range 3 {
		if err := session(10, false); err != nil {
			t.Fatal(err)
		}
	}
	for i, o := range p.outs {
		pkts := capt.pkts[o.media]
		if len(pkts) < 30 {
			t.Fatalf("track %d: %d packets, want at least 30", i, len(pkts))
		}
		for j := 1; j < len(pkts); j++ {
			if d := int32(pkts[j].Timestamp - pkts[j-1].Timestamp); d < 0 {
				t.Errorf("track %d: RTP timestamp steps back by %d at packet %d", i, -d, j)
			}
		}
	}
	if err := session(2, true); !errors.Is(err, ErrTracksChanged) {
		t.Errorf("write after the tracks changed = %v, want ErrTracksChanged", err)
	}
}
