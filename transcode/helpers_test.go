package transcode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
	"github.com/sluicemedia/sluice/packager/mpegts"
)

// fixture returns the path of a TS file ffmpeg encodes once per test binary with args (input
// and encoding).
func fixture(t *testing.T, name string, args ...string) string {
	t.Helper()
	return testutil.Clip(t, name+".ts", append(args, "-f", "mpegts")...)
}

// lavfi sources and encodings of the fixtures.
func source(width, height, fps, seconds int) []string {
	return append(testutil.Pattern{Width: width, Height: height, FPS: fps}.Args(), "-t", strconv.Itoa(seconds))
}

func h264720p(t *testing.T) string {
	return fixture(t, "h264-720p", append(source(1280, 720, 20, 9),
		"-c:v", "libx264", "-preset", "ultrafast", "-g", "20", "-pix_fmt", "yuv420p", "-b:v", "2000k",
		"-c:a", "aac", "-b:a", "96k")...)
}

func h265360p(t *testing.T) string {
	return fixture(t, "h265-360p", append(source(640, 360, 25, 4),
		"-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error:keyint=25",
		"-pix_fmt", "yuv420p", "-b:v", "600k", "-c:a", "aac", "-b:a", "64k")...)
}

func h264360p30(t *testing.T) string {
	return fixture(t, "h264-360p30", append(source(640, 360, 30, 5),
		"-c:v", "libx264", "-preset", "ultrafast", "-g", "30", "-pix_fmt", "yuv420p", "-b:v", "600k",
		"-c:a", "aac", "-b:a", "64k")...)
}

// drain reads r until the stream closes or ctx ends.
func drain(ctx context.Context, r *stream.Reader) ([]*media.AccessUnit, error) {
	var out []*media.AccessUnit
	for {
		au, err := r.Read(ctx)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, au)
	}
}

// writeTS muxes units into a TS file.
func writeTS(t *testing.T, path string, tracks []media.Track, units []*media.AccessUnit) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := mpegts.NewMuxer(f, tracks)
	if err != nil {
		t.Fatal(err)
	}
	for _, au := range units {
		if err := m.WriteAccessUnit(au); err != nil {
			t.Fatal(err)
		}
	}
}

// probed is what ffprobe says of a file's streams and packets.
type probed struct {
	Streams []struct {
		Index        int    `json:"index"`
		CodecName    string `json:"codec_name"`
		CodecType    string `json:"codec_type"`
		Width        int    `json:"width"`
		Height       int    `json:"height"`
		PixFmt       string `json:"pix_fmt"`
		AvgFrameRate string `json:"avg_frame_rate"`
		SampleRate   string `json:"sample_rate"`
	} `json:"streams"`
	Packets []struct {
		StreamIndex int    `json:"stream_index"`
		Size        string `json:"size"`
		PTSTime     string `json:"pts_time"`
		Flags       string `json:"flags"`
	} `json:"packets"`
	Format struct {
		Duration string `json:"duration"`
	} `json:"format"`
}

func ffprobe(t *testing.T, path string) probed {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ffprobe", "-v", "error", "-print_format", "json",
		"-show_streams", "-show_format", "-show_entries", "packet=stream_index,size,pts_time,flags", path).Output()
	if err != nil {
		t.Fatalf("ffprobe %s: %v", path, err)
	}
	var p probed
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatalf("ffprobe %s: %v", path, err)
	}
	return p
}

// encode runs ffmpeg with the arguments Args builds for tc on the TS file in (stdin to stdout,
// as a Job does) and returns the TS file it wrote; the test fails when ffmpeg does.
func encode(t *testing.T, tc *Settings, in string) string {
	t.Helper()
	tracks, _ := streamtest.ReadTS(t, in)
	args, err := Args(tc, tracks, HW{})
	if err != nil {
		t.Fatalf("Args: %v", err)
	}
	src, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	out := filepath.Join(t.TempDir(), "out.ts")
	dst, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ffmpeg", args...)
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = src, dst, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ffmpeg %q: %v\n%s", args, err, stderr.Bytes())
	}
	return out
}

// runJob runs a Job in a goroutine; wait returns its error.
func runJob(ctx context.Context, j *Job) (wait func(time.Duration) (error, bool)) {
	done := make(chan error, 1)
	go func() { done <- j.Run(ctx) }()
	return func(d time.Duration) (error, bool) {
		select {
		case err := <-done:
			return err, true
		case <-time.After(d):
			return nil, false
		}
	}
}

// pidGone tells whether no process has the id any more.
func pidGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
