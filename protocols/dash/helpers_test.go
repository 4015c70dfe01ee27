package dash

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
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
		out, err := os.Create(joined)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range append([]string{init}, chunks...) {
			b, err := os.ReadFile(f)
			if err != nil {
				continue // deleted meanwhile: its successor follows
			}
			_, _ = out.Write(b)
		}
		out.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		res, err := exec.CommandContext(ctx, "ffprobe", "-v", "error", "-show_entries", "packet=size,duration_time",
			"-of", "csv=p=0", joined).Output()
		cancel()
		if err != nil {
			t.Fatalf("ffprobe: %v", err)
		}
		var bytes int64
		var secs float64
		for _, line := range strings.Split(string(res), "\n") {
			f := strings.Split(strings.TrimSpace(line), ",")
			if len(f) < 2 {
				continue
			}
			d, err1 := strconv.ParseFloat(f[0], 64)
			n, err2 := strconv.ParseInt(f[1], 10, 64)
			if err1 == nil && err2 == nil {
				bytes += n
				secs += d
			}
		}
		if secs <= 0 {
			t.Fatalf("stream %d: no packets", stream)
		}
		total += float64(bytes) * 8 / 1000 / secs
	}
	return total
}
