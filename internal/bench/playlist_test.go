package bench

import (
	"testing"
	"time"
)

func TestParsePlaylist(t *testing.T) {
	text := "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:4\n" +
		"#EXT-X-MAP:URI=\"init.mp4\"\n#EXT-X-PROGRAM-DATE-TIME:2026-11-21T18:00:00.000Z\n" +
		"#EXTINF:2.000000,\nseg4.m4s\n#EXTINF:2.033,\nseg5.m4s\n#EXTINF:1.967\nseg6.m4s\n"
	p := parsePlaylist(text)
	if p.seq != 4 || len(p.durs) != 3 || p.durs[0] != 2 || p.durs[1] != 2.033 || p.durs[2] != 1.967 {
		t.Fatalf("parsed %+v", p)
	}
	if p := parsePlaylist("not a playlist"); p.seq != 0 || len(p.durs) != 0 {
		t.Fatalf("parsed garbage as %+v", p)
	}
}

// TestDelays: three 2 s segments of a 30 fps clip with a key frame every 60 frames; each is
// listed 50 ms after the frame before the next key frame was sent. The first is left out.
func TestDelays(t *testing.T) {
	c := &Clip{}
	for i := range 200 {
		c.Frames = append(c.Frames, Frame{PTS: time.Duration(i) * time.Second / 30, Key: i%60 == 0, lastChunk: i})
	}
	c.At = make([]time.Duration, 200)
	s := newSent(c)
	t0 := time.Date(2026, 11, 21, 18, 0, 0, 0, time.UTC)
	for i := range s.at[:190] {
		s.at[i] = t0.Add(time.Duration(i) * time.Second / 30)
	}
	l := newListing()
	l.minSeq = 7
	for k, n := range []int{7, 8, 9} {
		last := 60*(k+1) - 1 // the frame before key frame 60, 120, 180
		l.seen[n] = s.at[last].Add(50 * time.Millisecond)
		l.dur[n] = 2
	}
	l.seen[10], l.dur[10] = t0.Add(time.Hour), 2 // its last frame (239) was never sent
	got := l.Delays(s)
	if len(got) != 2 || got[0] != 50 || got[1] != 50 {
		t.Fatalf("delays %v, want [50 50]", got)
	}
	if n := s.FramesSent(); n != 190 {
		t.Fatalf("frames sent %d, want 190", n)
	}
}
