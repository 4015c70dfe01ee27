package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/mediatest"
	"github.com/sluicemedia/sluice/packager/mpegts"
)

// feedChunks writes b to f in chunks of n bytes, failing on a short or failed write.
func feedChunks(t *testing.T, f *TSFeed, b []byte, n int) {
	t.Helper()
	for i := 0; i < len(b); i += n {
		p := b[i:min(i+n, len(b))]
		if w, err := f.Write(p); err != nil || w != len(p) {
			t.Fatalf("Write of %d bytes at %d: %d, %v", len(p), i, w, err)
		}
	}
}

// feedSession feeds b, in chunks of n bytes, to a new TSFeed publishing into s and finishes
// it: one publisher session. It returns the feed.
func feedSession(t *testing.T, s *stream.Stream, b []byte, n int) *TSFeed {
	t.Helper()
	f := NewTSFeed(NewPublisher(s, discard))
	feedChunks(t, f, b, n)
	f.Finish()
	return f
}

// TestTSFeedChunks pushes one program in chunks of odd sizes: the tracks are published once,
// every whole unit comes out with its timestamps, and Finish drops the access unit still
// open (counted) and ends the session.
func TestTSFeedChunks(t *testing.T) {
	tracks := avTracks()
	aus := synthAV(90000, 2)
	// A video PES over 64 KiB has no length (ISO/IEC 13818-1 2.4.3.7): the demuxer knows it
	// whole only when the next PES of its stream starts. At the end of a session it cannot be
	// proved whole, so Finish drops it.
	aus = append(aus, &media.AccessUnit{Track: 0, PTS: 3 * 90000, DTS: 3 * 90000,
		Payload: [][]byte{filled(70000, 0x41)}})
	whole := aus[:len(aus)-1]
	ts := muxTS(t, tracks, aus)
	for _, n := range []int{1, 7, 187, 189, 1000, 1316, 65536, len(ts)} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s, r := newStream(t)
			in := NewPublisher(s, discard)
			f := NewTSFeed(in)
			feedChunks(t, f, ts, n)
			if !in.Publishing() || !s.Publishing() {
				t.Fatal("not publishing after the whole program")
			}
			if held := int64(len(aus)) - f.Units(); held != 1 {
				t.Errorf("%d units published before Finish, want %d: all but the last", f.Units(), len(aus)-1)
			}
			f.Finish()
			if f.Err() != nil {
				t.Errorf("Err after a clean program: %v", f.Err())
			}
			if in.Publishing() || s.Publishing() {
				t.Error("still publishing after Finish")
			}
			if f.Units() != int64(len(whole)) || f.Stats().IncompletePES != 1 {
				t.Errorf("%d units published, %d dropped incomplete; want %d and 1", f.Units(), f.Stats().IncompletePES, len(whole))
			}
			if d := s.Discontinuities(); d != 0 {
				t.Errorf("%d discontinuities, want 0: tracks published once", d)
			}
			got := s.Tracks()
			if len(got) != 2 || got[0].Codec != media.CodecH264 || got[0].Params.Width != 320 || got[1].Codec != media.CodecAAC {
				t.Fatalf("tracks %s, want H264 320x240, AAC", Describe(got))
			}
			out := readAll(s, r)
			if len(out) != len(whole) {
				t.Fatalf("reader got %d units, want %d", len(out), len(whole))
			}
			for i, au := range out {
				want := whole[i]
				if au.Track != want.Track || au.DTS != want.DTS || au.PTS != want.PTS || au.Key != want.Key {
					t.Fatalf("unit %d: track %d PTS/DTS %d/%d key %v, want track %d %d/%d key %v",
						i, au.Track, au.PTS, au.DTS, au.Key, want.Track, want.PTS, want.DTS, want.Key)
				}
			}
		})
	}
}

// TestTSFeedSessions: a new publisher may attach once a feed finished, and the next feed's
// session is a discontinuity for readers.
func TestTSFeedSessions(t *testing.T) {
	ts := muxTS(t, avTracks(), synthAV(0, 1))
	s, r := newStream(t)
	for range 2 {
		feedSession(t, s, ts, 1000)
	}
	if d := s.Discontinuities(); d != 1 {
		t.Errorf("%d discontinuities, want 1", d)
	}
	aus := readAll(s, r)
	discs := 0
	for _, au := range aus {
		if au.Discontinuity {
			discs++
		}
	}
	if discs != 1 || len(aus) != 2*len(synthAV(0, 1)) {
		t.Errorf("%d units, %d flagged discontinuous; want %d and 1", len(aus), discs, 2*len(synthAV(0, 1)))
	}
}

// TestTSFeedRefused: a stream that already has a publisher refuses the feed's; Write fails
// then and keeps failing, and Finish only closes.
func TestTSFeedRefused(t *testing.T) {
	ts := muxTS(t, avTracks(), synthAV(0, 1))
	s := stream.New("busy", stream.Options{Log: discard})
	other, err := s.Publish()
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	f := NewTSFeed(NewPublisher(s, discard))
	var first error
	for i := 0; i < len(ts) && first == nil; i += 1316 {
		_, first = f.Write(ts[i:min(i+1316, len(ts))])
	}
	if !errors.Is(first, stream.ErrBusy) || !strings.HasPrefix(first.Error(), "publish: ") {
		t.Fatalf("Write: %v, want publish: ... ErrBusy", first)
	}
	if n, err := f.Write(ts[:188]); n != 0 || !errors.Is(err, stream.ErrBusy) {
		t.Errorf("Write after the failure: %d, %v; want 0 and the same error", n, err)
	}
	if !errors.Is(f.Err(), stream.ErrBusy) {
		t.Errorf("Err: %v", f.Err())
	}
	f.Finish()
	if f.Units() != 0 {
		t.Errorf("%d units published", f.Units())
	}
}

// unsupportedProgram is a PAT and a PMT of one MPEG-2 video stream (stream type 0x02), which
// this server does not carry, as packager/mpegts writes them.
func unsupportedProgram() []byte {
	var b []byte
	for _, h := range []string{
		"474000100000b00d0001c100000001f0002ab104b2",
		"475000100002b0120001c10000e100f00002e100f0009e8b23d1",
	} {
		p := bytes.Repeat([]byte{0xff}, mpegts.PacketSize)
		copy(p, mustHex(h))
		b = append(b, p...)
	}
	return b
}

// TestTSFeedUnsupported: a program without a track this server carries fails the feed, and
// keeps failing it, without a publisher.
func TestTSFeedUnsupported(t *testing.T) {
	s := stream.New("unsupported", stream.Options{Log: discard})
	f := NewTSFeed(NewPublisher(s, discard))
	if _, err := f.Write(unsupportedProgram()); !errors.Is(err, mpegts.ErrNoTracks) {
		t.Fatalf("Write: %v, want ErrNoTracks", err)
	}
	if _, err := f.Write(synthTS(t, 0, 1024)); !errors.Is(err, mpegts.ErrNoTracks) {
		t.Errorf("Write after the failure: %v, want ErrNoTracks again", err)
	}
	f.Finish()
	if f.Units() != 0 || s.Publishing() || s.Tracks() != nil {
		t.Errorf("published %d units, publishing %v, tracks %v", f.Units(), s.Publishing(), s.Tracks())
	}
}

// TestTSFeedProgramChange: a new program in the same bytes starts a new publisher session
// with the new tracks. The new demuxer starts at the tables after the change, so its video
// starts at the next key frame.
func TestTSFeedProgramChange(t *testing.T) {
	first := synthTS(t, 0, 1024, 2048, 3072, 4096)
	av := synthAV(90000, 3)
	ts := append(append([]byte{}, first...), muxTS(t, avTracks(), av)...)
	s, r := newStream(t)
	f := feedSession(t, s, ts, 777)
	if f.Err() != nil {
		t.Fatal(f.Err())
	}
	if d := s.Discontinuities(); d != 1 {
		t.Errorf("%d discontinuities, want 1", d)
	}
	if tracks := s.Tracks(); len(tracks) != 2 || tracks[0].Codec != media.CodecH264 {
		t.Errorf("tracks after the change %s, want H264 and AAC", Describe(tracks))
	}
	aus := readAll(s, r)
	checkMonotonic(t, aus)
	var before, video int
	for i, au := range aus {
		if au.Discontinuity {
			before = i
		}
		if i >= before && before > 0 && au.Track == 0 {
			video++
		}
	}
	if before != 5 {
		t.Errorf("first session: %d units, want 5", before)
	}
	if video < 25 || int64(len(aus)) != f.Units() {
		t.Errorf("second session: %d video units, want at least 25 (from the key frame at 1 s); %d read, %d published", video, len(aus), f.Units())
	}
}

// TestTSFeedTimelineJump: a source whose timestamps jump is re-anchored in the same session
// (its timestamps go on rising), and no unit is lost.
func TestTSFeedTimelineJump(t *testing.T) {
	ts := synthTS(t, 48000*100, 48000*100+1024, 48000*100+2048, 0, 1024, 2048)
	s, r := newStream(t)
	f := feedSession(t, s, ts, 100)
	if d := s.Discontinuities(); d != 0 {
		t.Errorf("%d discontinuities, want 0", d)
	}
	aus := readAll(s, r)
	checkMonotonic(t, aus)
	if len(aus) != 6 || f.Units() != 6 {
		t.Errorf("%d units read, %d published, want 6", len(aus), f.Units())
	}
}

// TestTSFeedGarbage: bytes that are not MPEG-TS publish nothing and are no error.
func TestTSFeedGarbage(t *testing.T) {
	s := stream.New("garbage", stream.Options{Log: discard})
	f := NewTSFeed(NewPublisher(s, discard))
	junk := []byte(strings.Repeat("not a transport stream\x47", 500))
	if n, err := f.Write(junk); n != len(junk) || err != nil {
		t.Fatalf("Write: %d, %v", n, err)
	}
	f.Finish()
	if f.Err() != nil || f.Units() != 0 || s.Publishing() || s.Tracks() != nil {
		t.Errorf("after garbage: err %v, %d units, publishing %v, tracks %v", f.Err(), f.Units(), s.Publishing(), s.Tracks())
	}
}

// TestTSFeedFFmpeg feeds what ffmpeg writes, in odd-sized chunks.
func TestTSFeedFFmpeg(t *testing.T) {
	testutil.RequireFFmpeg(t)
	path := filepath.Join(t.TempDir(), "clip.ts")
	p := testutil.FFmpeg(t, append(testutil.Pattern{Width: 160, Height: 120}.Args(), "-t", "2",
		"-c:v", "libx264", "-preset", "ultrafast", "-bf", "2", "-g", "25", "-pix_fmt", "yuv420p",
		"-c:a", "aac", "-f", "mpegts", path)...)
	if err := p.Wait(time.Minute); err != nil {
		t.Fatalf("ffmpeg: %v", err)
	}
	ts, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, r := newStream(t)
	f := NewTSFeed(NewPublisher(s, discard))
	feedChunks(t, f, ts, 1001)
	before := f.Units()
	f.Finish()
	if f.Err() != nil {
		t.Fatal(f.Err())
	}
	// ffmpeg writes video PES without a length: the last one cannot be proved whole when the
	// session ends, so Finish drops it; its audio PES have lengths and came out whole already.
	if f.Units() != before || f.Stats().IncompletePES != 1 {
		t.Errorf("Finish published %d units more and dropped %d incomplete; want none and 1", f.Units()-before, f.Stats().IncompletePES)
	}
	tracks := s.Tracks()
	if len(tracks) != 2 || tracks[0].Codec != media.CodecH264 || tracks[0].Params.Width != 160 ||
		tracks[0].Params.Height != 120 || tracks[1].Codec != media.CodecAAC || tracks[1].Params.SampleRate != 48000 {
		t.Fatalf("tracks %s, want H264 160x120, AAC 48000 Hz", Describe(tracks))
	}
	if d := s.Discontinuities(); d != 0 {
		t.Errorf("%d discontinuities, want 0", d)
	}
	aus := readAll(s, r)
	checkMonotonic(t, aus)
	video := 0
	for _, au := range aus {
		if au.Track == 0 {
			if video == 0 && !au.Key {
				t.Fatal("first video unit is not a key frame")
			}
			video++
		}
	}
	// 2 s at 25 fps but the last frame, and about 94 AAC frames.
	if video != 49 || len(aus)-video < 90 {
		t.Errorf("%d video and %d audio units, want 49 and about 94", video, len(aus)-video)
	}
}

// TestTSFeedCutMidFrame is issue 19's publisher that dropped in the middle of a key frame:
// the frame's first packets arrived, the rest never will. Finish must not publish the part
// as a whole frame (players fail to decode it); it is dropped and counted.
func TestTSFeedCutMidFrame(t *testing.T) {
	aus := synthAV(90000, 2)
	key := &media.AccessUnit{Track: 0, PTS: 3 * 90000, DTS: 3 * 90000, Key: true,
		Payload: [][]byte{mediatest.H264SPS, mediatest.H264PPS, filled(90000, 0x65)}}
	ts := muxTS(t, avTracks(), append(aus, key))
	before := muxTS(t, avTracks(), aus)
	cut := len(before) + (len(ts)-len(before))/2/mpegts.PacketSize*mpegts.PacketSize
	s, r := newStream(t)
	f := feedSession(t, s, ts[:cut], 1316)
	out := readAll(s, r)
	if len(out) != len(aus) || f.Stats().IncompletePES != 1 {
		t.Fatalf("%d units published, %d dropped incomplete; want the %d whole ones and 1", len(out), f.Stats().IncompletePES, len(aus))
	}
	for i, au := range out {
		if au.Size() != aus[i].Size() {
			t.Fatalf("unit %d: %d bytes published, %d sent", i, au.Size(), aus[i].Size())
		}
	}
}
