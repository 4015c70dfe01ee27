package ingest

import (
	"errors"
	"testing"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
)

func video(dts int64, key bool) *media.AccessUnit {
	return &media.AccessUnit{Track: 0, PTS: dts, DTS: dts, Key: key, Payload: [][]byte{{0x41}}}
}

func audio(dts int64) *media.AccessUnit {
	return &media.AccessUnit{Track: 1, PTS: dts, DTS: dts, Key: true, Payload: [][]byte{{0x21}}}
}

// TestPublisher: units before SetTracks, of unknown tracks and of video before a key frame
// are dropped; a timeline jump is re-anchored in the same session (the one timestamp policy,
// internal/stream/normalize.go); Close ends the session.
func TestPublisher(t *testing.T) {
	s, r := newStream(t)
	in := NewPublisher(s, discard)
	if err := in.Write(audio(0)); err != nil || in.Units() != 0 || in.Publishing() {
		t.Fatalf("Write before SetTracks: %v, %d units, publishing %v", err, in.Units(), in.Publishing())
	}
	if err := in.SetTracks(avTracks()); err != nil {
		t.Fatal(err)
	}
	if !in.Publishing() || !s.Publishing() {
		t.Fatal("not publishing after SetTracks")
	}
	steps := []struct {
		au   *media.AccessUnit
		kept bool
	}{
		{video(0, false), false}, // before the first key frame
		{&media.AccessUnit{Track: 2, Payload: [][]byte{{1}}}, false},
		{&media.AccessUnit{Track: -1, Payload: [][]byte{{1}}}, false},
		{video(3600, true), true},
		{audio(1024), true},
		{video(7200, false), true},
		{video(7200, false), true},     // same DTS: repaired
		{audio(48000 * 60), true},      // a jump of a minute: re-anchored
		{video(90000*60, false), true}, // the same jump on video: re-anchored, no key frame needed
		{video(90000*60+3600, true), true},
		{audio(48000*60 + 1024), true},
	}
	var want int64
	for i, st := range steps {
		if err := in.Write(st.au); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if st.kept {
			want++
		}
		if in.Units() != want {
			t.Fatalf("step %d: %d units published, want %d", i, in.Units(), want)
		}
	}
	if d := s.Discontinuities(); d != 0 {
		t.Errorf("%d discontinuities, want 0", d)
	}
	in.Close()
	if in.Publishing() || s.Publishing() {
		t.Error("publishing after Close")
	}
	if err := in.Write(audio(48000*60 + 2048)); err != nil || in.Units() != want {
		t.Errorf("Write after Close: %v, %d units", err, in.Units())
	}
	aus := readAll(s, r)
	checkMonotonic(t, aus)
	if int64(len(aus)) != want {
		t.Errorf("reader got %d units, want %d", len(aus), want)
	}
}

// TestPublisherBusy: SetTracks fails while the stream has another publisher, and works once
// it is gone.
func TestPublisherBusy(t *testing.T) {
	s := stream.New("busy", stream.Options{Log: discard})
	other, err := s.Publish()
	if err != nil {
		t.Fatal(err)
	}
	in := NewPublisher(s, discard)
	if err := in.SetTracks(avTracks()); !errors.Is(err, stream.ErrBusy) || in.Publishing() {
		t.Fatalf("SetTracks: %v, publishing %v; want ErrBusy", err, in.Publishing())
	}
	other.Close()
	if err := in.SetTracks(avTracks()); err != nil || !in.Publishing() {
		t.Fatalf("SetTracks after the other publisher left: %v", err)
	}
	in.Close()
	s.Close()
	if err := in.SetTracks(avTracks()); !errors.Is(err, stream.ErrClosed) {
		t.Errorf("SetTracks on a closed stream: %v, want ErrClosed", err)
	}
}

func TestDescribe(t *testing.T) {
	tracks := append(avTracks(), media.Track{ID: 2, Codec: media.CodecOpus, ClockRate: 48000})
	if got, want := Describe(tracks), "H264 320x240, AAC 48000 Hz, Opus"; got != want {
		t.Errorf("Describe: %q, want %q", got, want)
	}
	if got := Describe(nil); got != "" {
		t.Errorf("Describe(nil): %q", got)
	}
}
