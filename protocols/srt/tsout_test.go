package srt

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/packager/mpegts"
)

// sourceUnits encodes two seconds of the test source and demuxes it.
func sourceUnits(t *testing.T) ([]media.Track, []*media.AccessUnit) {
	t.Helper()
	testutil.RequireFFmpeg(t)
	path := filepath.Join(t.TempDir(), "src.ts")
	args := append([]string{"-hide_banner", "-loglevel", "error"}, sourceArgs...)
	args = append(args, "-t", "2", "-f", "mpegts", path)
	if out, err := exec.Command("ffmpeg", args...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, out)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return demuxAll(t, b)
}

func demuxAll(t *testing.T, b []byte) ([]media.Track, []*media.AccessUnit) {
	t.Helper()
	d := mpegts.NewDemuxer(bytes.NewReader(b))
	tracks, err := d.Tracks()
	if err != nil {
		t.Fatal(err)
	}
	var units []*media.AccessUnit
	for {
		au, err := d.Read()
		if errors.Is(err, io.EOF) {
			return tracks, units
		}
		if err != nil {
			t.Fatal(err)
		}
		units = append(units, au)
	}
}

// chunkWriter records each Write's size.
type chunkWriter struct {
	buf   bytes.Buffer
	sizes map[int]int
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	w.sizes[len(p)]++
	return w.buf.Write(p)
}

// TestTSOutRoundTrip muxes two publisher sessions of the same media through a Reader: every
// write is one 7×188-byte payload, the output demuxes to the same tracks, and DTS keeps
// increasing across the discontinuity.
func TestTSOutRoundTrip(t *testing.T) {
	tracks, units := sourceUnits(t)
	s := stream.New("t", stream.Options{QueueSize: 4096})
	r, err := s.NewReader("out")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		pub, err := s.Publish()
		if err != nil {
			t.Fatal(err)
		}
		if err := pub.SetTracks(tracks); err != nil {
			t.Fatal(err)
		}
		for _, au := range units {
			if err := pub.Write(au); err != nil {
				t.Fatal(err)
			}
		}
		pub.Close()
	}
	s.Close() // the reader gets what is queued, then io.EOF
	w := &chunkWriter{sizes: map[int]int{}}
	out := newTSOut(w, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := out.pump(ctx, r); !errors.Is(err, io.EOF) {
		t.Fatalf("pump: %v", err)
	}
	if len(w.sizes) != 1 || w.sizes[payloadSize] == 0 {
		t.Fatalf("write sizes %v, want only %d", w.sizes, payloadSize)
	}
	gotTracks, got := demuxAll(t, w.buf.Bytes())
	requireTracks(t, gotTracks)
	if len(got) < 2*len(units)-60 {
		t.Fatalf("%d units out of %d", len(got), 2*len(units))
	}
	last := map[int]int64{}
	for _, au := range got {
		if prev, ok := last[au.Track]; ok && au.DTS <= prev {
			t.Fatalf("track %d: DTS %d after %d", au.Track, au.DTS, prev)
		}
		last[au.Track] = au.DTS
	}
}
