package bench

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// TestScanClip: a 4 s clip at 25 fps with a key frame a second is scheduled over about 4 s, in
// order, and lists 100 frames with a key frame every 25.
func TestScanClip(t *testing.T) {
	testutil.RequireFFmpeg(t)
	path := filepath.Join(t.TempDir(), "clip.ts")
	testutil.MakeClip(t, path, 4, 1000)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := scanClip(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Frames) != 100 {
		t.Fatalf("%d frames, want 100", len(c.Frames))
	}
	for i, f := range c.Frames {
		if f.Key != (i%25 == 0) {
			t.Fatalf("frame %d: key %v", i, f.Key)
		}
		if i > 0 && f.lastChunk < c.Frames[i-1].lastChunk {
			t.Fatalf("frame %d ends before frame %d", i, i-1)
		}
	}
	if c.Frames[25].PTS != time.Second {
		t.Fatalf("second key frame at %v, want 1s", c.Frames[25].PTS)
	}
	for i := 1; i < len(c.At); i++ {
		if c.At[i] < c.At[i-1] {
			t.Fatalf("chunk %d due before chunk %d", i, i-1)
		}
	}
	if last := c.At[len(c.At)-1]; last < 3500*time.Millisecond || last > 4500*time.Millisecond {
		t.Fatalf("schedule lasts %v, want about 4 s", last)
	}
	if _, err := scanClip([]byte("not a transport stream, not at all, certainly not 188 bytes of it")); err == nil {
		t.Fatal("garbage scanned without error")
	}
}
