package stream

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
)

func TestFanOutOrderAndIdentity(t *testing.T) {
	s := New("cam", testOptions(newFakeClock()))
	p := mustPublish(t, s, avTracks)
	var units []*media.AccessUnit
	for g := range 20 {
		units = append(units, gopUnits(g*30, 30)...)
	}

	const readers = 5
	got := make([][]*media.AccessUnit, readers)
	var wg sync.WaitGroup
	for i := range readers {
		r := mustReader(t, s, "r")
		wg.Go(func() {
			for {
				au, err := r.Read(context.Background())
				if errors.Is(err, io.EOF) {
					return
				}
				if err != nil {
					t.Errorf("Read: %v", err)
					return
				}
				got[i] = append(got[i], au)
			}
		})
	}
	writeAll(t, p, units...) // fewer units than a queue holds: nobody drops
	s.Close()
	wg.Wait()

	for i, g := range got {
		if len(g) != len(units) {
			t.Fatalf("reader %d got %d units, want %d", i, len(g), len(units))
		}
		for j := range g {
			if g[j] != units[j] {
				t.Fatalf("reader %d unit %d: got %p, want %p", i, j, g[j], units[j])
			}
		}
	}
}

func TestWriterNeverBlocks(t *testing.T) {
	s := New("cam", testOptions(newFakeClock()))
	p := mustPublish(t, s, avTracks)
	stuck := mustReader(t, s, "stuck") // never reads
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 100_000 {
			if err := p.Write(vid(i, i%50 == 0)); err != nil {
				t.Errorf("Write: %v", err)
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("writer blocked on a reader that does not read")
	}
	if stuck.Dropped() == 0 {
		t.Error("stuck reader dropped nothing")
	}
	if n := queued(stuck); n != DefaultQueueSize {
		t.Errorf("stuck reader holds %d units, want a full queue of %d", n, DefaultQueueSize)
	}

	// No allocation per unit, with a stuck reader and a reader that keeps up.
	live := mustReader(t, s, "live")
	for queued(live) > 0 { // the GOP it starts with
		mustRead(t, live)
	}
	au := vid(0, false)
	allocs := testing.AllocsPerRun(1000, func() {
		if err := p.Write(au); err != nil {
			t.Fatal(err)
		}
		if got, err := live.Read(context.Background()); got != au || err != nil {
			t.Fatalf("Read = %p, %v; want %p", got, err, au)
		}
	})
	if allocs != 0 {
		t.Errorf("Write allocates %.1f times a unit, want 0", allocs)
	}
	s.Close()
}

func TestNewReaderStartsAtLatestKeyFrame(t *testing.T) {
	s := New("cam", testOptions(newFakeClock()))
	early := mustReader(t, s, "early") // before any publisher
	p := mustPublish(t, s, avTracks)
	before := []*media.AccessUnit{aud(0), vid(1, false)} // no key frame yet: nobody starts here
	gop1 := gopUnits(10, 7)
	gop2 := gopUnits(20, 5)
	writeAll(t, p, before...)
	writeAll(t, p, gop1...)
	writeAll(t, p, gop2...)

	expectUnits(t, early, append(gop1, gop2...))
	if early.Dropped() != 0 {
		t.Errorf("waiting for the first key frame counted %d drops", early.Dropped())
	}

	late := mustReader(t, s, "late")
	expectUnits(t, late, gop2)
	if au := readNow(t, late); au != nil {
		t.Fatalf("late reader got %+v past the GOP", au)
	}
	next := vid(30, false)
	writeAll(t, p, next)
	expectUnits(t, late, []*media.AccessUnit{next})
	s.Close()
}

func TestNewReaderWaitsWhenGOPExceedsQueue(t *testing.T) {
	s, p := publishing(t, queueOptions(newFakeClock(), 8))
	writeAll(t, p, gopUnits(0, 12)...) // longer than a queue
	r := mustReader(t, s, "r")
	if au := readNow(t, r); au != nil {
		t.Fatalf("got %+v from a GOP longer than the queue", au)
	}
	gop := gopUnits(100, 4)
	writeAll(t, p, gop...)
	expectUnits(t, r, gop)
}

func TestNewReaderAudioOnlyPrefill(t *testing.T) {
	opts := testOptions(newFakeClock())
	opts.AudioPrefill = 5
	s := New("radio", opts)
	p := mustPublish(t, s, audioTracks)
	var units []*media.AccessUnit
	for i := range 12 {
		au := aud(i)
		au.Track = 0
		units = append(units, au)
	}
	writeAll(t, p, units...)
	r := mustReader(t, s, "r")
	expectUnits(t, r, units[7:])
	s.Close()
}

func TestStreamCloseDrainsThenEOF(t *testing.T) {
	s := New("cam", testOptions(newFakeClock()))
	p := mustPublish(t, s, avTracks)
	r := mustReader(t, s, "r")
	units := gopUnits(0, 3)
	writeAll(t, p, units...)
	_, changed := s.WatchTracks()
	s.Close()
	s.Close()

	expectUnits(t, r, units)
	if _, err := r.Read(context.Background()); !errors.Is(err, io.EOF) {
		t.Fatalf("Read after drain: %v, want io.EOF", err)
	}
	select {
	case <-changed:
	default:
		t.Error("WatchTracks channel not closed with the stream")
	}
	if err := p.Write(vid(9, true)); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close: %v, want ErrClosed", err)
	}
	if _, err := s.NewReader("x"); !errors.Is(err, ErrClosed) {
		t.Errorf("NewReader after Close: %v, want ErrClosed", err)
	}
	if _, err := s.Publish(); !errors.Is(err, ErrClosed) {
		t.Errorf("Publish after Close: %v, want ErrClosed", err)
	}
}

func TestReaderCloseAndContext(t *testing.T) {
	s := New("cam", testOptions(newFakeClock()))
	defer s.Close()
	r := mustReader(t, s, "r")

	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(10 * time.Millisecond); cancel() }()
	if _, err := r.Read(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Read with cancelled ctx: %v", err)
	}

	errc := make(chan error)
	go func() {
		_, err := r.Read(context.Background())
		errc <- err
	}()
	time.Sleep(10 * time.Millisecond)
	r.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("Read after Close: %v, want ErrClosed", err)
	}
	if n := s.Stats().Readers; n != 0 {
		t.Errorf("stream still has %d readers", n)
	}
}

func TestWatchTracks(t *testing.T) {
	s := New("cam", testOptions(newFakeClock()))
	defer s.Close()
	tracks, changed := s.WatchTracks()
	if len(tracks) != 0 {
		t.Fatalf("new stream has tracks %v", tracks)
	}
	p := mustPublish(t, s, avTracks)
	select {
	case <-changed:
	default:
		t.Fatal("SetTracks did not notify")
	}
	if got := s.Tracks(); len(got) != 2 || got[0].Codec != media.CodecH264 {
		t.Fatalf("Tracks() = %+v", got)
	}
	bad := []media.Track{{ID: 1, Codec: media.CodecAAC}}
	if err := p.SetTracks(bad); err == nil {
		t.Error("SetTracks accepted a track whose ID is not its index")
	}
	p.Close()
	if err := p.SetTracks(avTracks); !errors.Is(err, ErrClosed) {
		t.Errorf("SetTracks after Close: %v, want ErrClosed", err)
	}
}

func TestWatchPublishingAndPending(t *testing.T) {
	s := New("watch", Options{})
	pub, ch := s.WatchPublishing()
	if pub {
		t.Fatal("publishing before Publish")
	}
	rd, err := s.NewReader("r")
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	p, err := s.Publish()
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	default:
		t.Fatal("Publish did not wake the watcher")
	}
	pub, ch = s.WatchPublishing()
	if !pub {
		t.Fatal("not publishing after Publish")
	}
	if err := p.SetTracks([]media.Track{{ID: 0, Codec: media.CodecAAC, ClockRate: 48000}}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := p.Write(&media.AccessUnit{Track: 0, DTS: int64(i) * 1024, PTS: int64(i) * 1024, Key: true, Payload: [][]byte{{1}}}); err != nil {
			t.Fatal(err)
		}
	}
	if n := rd.Pending(); n != 3 {
		t.Errorf("Pending() = %d after 3 writes, want 3", n)
	}
	p.Close()
	select {
	case <-ch:
	default:
		t.Fatal("Publisher.Close did not wake the watcher")
	}
	if pub, _ := s.WatchPublishing(); pub {
		t.Fatal("publishing after Close")
	}
	_, ch = s.WatchPublishing()
	s.Close()
	select {
	case <-ch:
	default:
		t.Fatal("Stream.Close did not wake the watcher")
	}
}
