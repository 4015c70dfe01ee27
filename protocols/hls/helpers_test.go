package hls

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// hlsArgs are the HLS muxer's arguments; fmp4 selects fMP4 segments.
func hlsArgs(fmp4 bool) []string {
	a := []string{"-f", "hls", "-hls_time", "2", "-hls_list_size", "6", "-hls_flags", "delete_segments"}
	if fmp4 {
		a = append(a, "-hls_segment_type", "fmp4")
	}
	return a
}

// sourceKbps measures the elementary-stream bitrate of the segments a live playlist lists now:
// it copies the playlist and its files aside (ffmpeg deletes old segments) and sums the packet
// sizes ffprobe reports over the playlist's duration.
func sourceKbps(t testing.TB, dir, name string) float64 {
	t.Helper()
	snap := t.TempDir()
	pl, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	var dur float64
	sc := bufio.NewScanner(strings.NewReader(string(pl)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "#EXTINF:"):
			v, _ := strconv.ParseFloat(strings.TrimSuffix(strings.SplitN(line[8:], ",", 2)[0], ","), 64)
			dur += v
		case strings.HasPrefix(line, "#EXT-X-MAP:URI=\""):
			copyFile(t, dir, snap, strings.TrimSuffix(strings.TrimPrefix(line, "#EXT-X-MAP:URI=\""), "\""))
		case line != "" && !strings.HasPrefix(line, "#"):
			copyFile(t, dir, snap, line)
		}
	}
	// Ended, so that ffprobe reads the copy once instead of waiting for it to grow.
	pl = append(pl, "\n#EXT-X-ENDLIST\n"...)
	if err := os.WriteFile(filepath.Join(snap, name), pl, 0o644); err != nil {
		t.Fatal(err)
	}
	var bytes int64
	for _, p := range testutil.FFprobePackets(t, filepath.Join(snap, name), "-allowed_extensions", "ALL") {
		bytes += p.Size
	}
	if dur <= 0 {
		t.Fatalf("playlist %s lists no duration", name)
	}
	return float64(bytes) * 8 / 1000 / dur
}

func copyFile(t testing.TB, from, to, name string) {
	t.Helper()
	src, err := os.Open(filepath.Join(from, name))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(filepath.Join(to, name))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
}
