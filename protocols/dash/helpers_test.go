package dash

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// dashArgs are the DASH muxer's arguments; timeline selects SegmentTimeline addressing
// (else $Number$ from availabilityStartTime).
func dashArgs(timeline bool) []string {
	tl := "0"
	if timeline {
		tl = "1"
	}
	return []string{"-f", "dash", "-seg_duration", "2", "-window_size", "6", "-use_template", "1",
		"-use_timeline", tl, "-streaming", "0"}
}

// sourceKbps measures the elementary-stream bitrate of the last five complete segments ffmpeg
// wrote (the ones the measurement of the stream overlaps): per stream, the init segment and the
// chunks joined into one fragmented MP4, whose packet sizes and durations ffprobe reports.
func sourceKbps(t testing.TB, dir string) float64 {
	t.Helper()
	snap := t.TempDir()
	var total float64
	for stream := 0; ; stream++ {
		init := filepath.Join(dir, fmt.Sprintf("init-stream%d.m4s", stream))
		if _, err := os.Stat(init); err != nil {
			break
		}
		chunks, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf("chunk-stream%d-*.m4s", stream)))
		sort.Strings(chunks)
		chunks = chunks[max(len(chunks)-5, 0):]
		joined := filepath.Join(snap, fmt.Sprintf("s%d.mp4", stream))
		joinFiles(t, joined, append([]string{init}, chunks...)) // one deleted meanwhile: its successor follows
		var bytes int64
		var secs float64
		for _, p := range testutil.FFprobePackets(t, joined) {
			bytes += p.Size
			secs += p.Duration
		}
		if secs <= 0 {
			t.Fatalf("stream %d: no packets", stream)
		}
		total += float64(bytes) * 8 / 1000 / secs
	}
	return total
}

// joinFiles writes the files one after the other into dst, passing over those that are gone,
// and returns how many it read.
func joinFiles(t testing.TB, dst string, files []string) int {
	t.Helper()
	var all []byte
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		all = append(all, b...)
		n++
	}
	if err := os.WriteFile(dst, all, 0o644); err != nil {
		t.Fatal(err)
	}
	return n
}
