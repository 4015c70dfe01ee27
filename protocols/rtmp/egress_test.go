package rtmp

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
)

var testTracks = []media.Track{
	{ID: 0, Codec: media.CodecH264, ClockRate: 90000, Params: media.Params{
		SPS: []byte{0x67, 0x42, 0xc0, 0x1e, 0xd9, 0x00, 0xa0, 0x2f, 0xf9, 0x70}, PPS: []byte{0x68, 0xce, 0x3c, 0x80},
		Width: 640, Height: 360}},
	{ID: 1, Codec: media.CodecAAC, ClockRate: 48000, Params: media.Params{AudioConfig: []byte{0x11, 0x90}, SampleRate: 48000, Channels: 2}},
}

// publishSession writes n video units (a key frame first) and n audio units from the given
// DTS in milliseconds.
func publishSession(t *testing.T, s *stream.Stream, startMs int64, n int) {
	t.Helper()
	pub, err := s.Publish()
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	if err := pub.SetTracks(testTracks); err != nil {
		t.Fatal(err)
	}
	for i := range int64(n) {
		v := (startMs + 40*i) * 90
		if err := pub.Write(&media.AccessUnit{Track: 0, DTS: v, PTS: v + 3600, Key: i == 0, Payload: [][]byte{{0x65, byte(i)}}}); err != nil {
			t.Fatal(err)
		}
		a := (startMs + 40*i) * 48
		if err := pub.Write(&media.AccessUnit{Track: 1, DTS: a, PTS: a, Key: true, Payload: [][]byte{{0x21, byte(i)}}}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEgressDiscontinuity checks what a player or a push receives: metadata and sequence
// headers first and again after a new publisher, timestamps from 0 that keep increasing
// across the new publisher's reset clock.
func TestEgressDiscontinuity(t *testing.T) {
	s := stream.New("e", stream.Options{Log: discardLog})
	defer s.Close()
	r, err := s.NewReader("test")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		e := newEgress(newConn(a, 0, 5*time.Second), 1, false)
		done <- e.run(ctx, r, nil)
	}()

	publishSession(t, s, 10000, 5) // from 10 s
	publishSession(t, s, 0, 5)     // a new encoder, its clock back at 0

	cr := newChunkReader(b)
	var kinds []string
	lastTS := map[uint8]uint32{}
	for len(kinds) < 2*(3+10) {
		msg, err := cr.readMessage()
		if err != nil {
			t.Fatal(err)
		}
		switch msg.Type {
		case msgDataAMF0:
			vals, err := amfDecode(msg.Body)
			if m, ok := parseMetaData(vals); err != nil || !ok || m["width"] != 640.0 || m["videocodecid"] != 7.0 {
				t.Fatalf("metadata %v, %v", vals, err)
			}
			kinds = append(kinds, "meta")
		case msgVideo, msgAudio:
			if len(msg.Body) > 1 && msg.Body[1] == 0 {
				kinds = append(kinds, "seq")
				continue
			}
			kinds = append(kinds, "unit")
			if prev, ok := lastTS[msg.Type]; ok && msg.Timestamp <= prev {
				t.Fatalf("type %d: timestamp %d after %d", msg.Type, msg.Timestamp, prev)
			}
			if _, ok := lastTS[msg.Type]; !ok && msg.Timestamp != 0 {
				t.Fatalf("first timestamp %d", msg.Timestamp)
			}
			lastTS[msg.Type] = msg.Timestamp
		}
	}
	want := []string{"meta", "seq", "seq"}
	for i, k := range want {
		if kinds[i] != k || kinds[13+i] != k {
			t.Fatalf("messages %v", kinds)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
