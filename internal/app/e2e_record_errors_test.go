package app

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// TestRecordingWriteErrorKeepsWhatWasWritten runs the server with a file size limit, as a full
// disk: the write error shows as the recording's last_error, and the file keeps what was
// written up to it, readable.
func TestRecordingWriteErrorKeepsWhatWasWritten(t *testing.T) {
	testutil.RequireFFmpeg(t)
	data := t.TempDir()
	addr := "127.0.0.1:" + strconv.Itoa(testutil.FreePort(t))
	const limit = 1_500_000
	c := startChild(t, addr, data, childFileLimitEnv+"="+strconv.Itoa(limit))
	port := testutil.FreePort(t)
	srv := c.ts.create("rtmp-servers", map[string]any{"server_name": "studio", "server_port": port})
	waitState(t, c.ts, "/api/rtmp-servers/getById", srv, "running")
	rec := c.ts.create("recording", recordingBody("full", map[string]any{
		"input_type": "INPUT_TYPE_RTMP_SOFTWARE", "input_server_id": srv, "input_stream_id": "cam"}))
	testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "flv", rtmpURL(port, "cam"))...)

	var r struct {
		State     string `json:"state"`
		LastError string `json:"last_error"`
	}
	testutil.Eventually(t, 40*time.Second, "the write error in last_error", func() bool {
		c.ts.call("/api/recording/getById", map[string]any{"id": rec}, http.StatusOK, &r)
		return strings.Contains(r.LastError, "file too large")
	})
	t.Logf("recording: state %q, last_error %q", r.State, r.LastError)
	fs := c.ts.recordedFiles(rec)
	if len(fs) == 0 || fs[0].State != "repaired" {
		t.Fatalf("files %+v: want the first one repaired", fs)
	}
	path := filepath.Join(data, "recordings", filepath.FromSlash(fs[0].Path))
	d, codecs := probeSeconds(t, path)
	t.Logf("file cut by the error: ffprobe %.2f s, entry %.2f s, %d bytes, %v", d, fs[0].Duration, fs[0].Size, codecs)
	// About 1.4 MB at 1064 kbit/s is 10 s; a second at most is lost to the error.
	if d < 8 || fs[0].Size > limit {
		t.Errorf("kept %.2f s, %d bytes (limit %d)", d, fs[0].Size, limit)
	}
}

// TestRecordingPathsConfined: names, file ids and download paths that try to leave the
// recordings folder answer 400 or 404 and touch nothing.
func TestRecordingPathsConfined(t *testing.T) {
	testutil.RequireFFmpeg(t)
	data := t.TempDir()
	ts := startServer(t, data, nil)
	defer ts.stop()
	outside := filepath.Join(data, "keep.txt")
	if err := os.WriteFile(outside, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}

	port := testutil.FreePort(t)
	srv := ts.create("rtmp-servers", map[string]any{"server_name": "studio", "server_port": port})
	waitState(t, ts, "/api/rtmp-servers/getById", srv, "running")
	rec := ts.create("recording", recordingBody("../../../keep.txt/..\\x y", map[string]any{
		"input_type": "INPUT_TYPE_RTMP_SOFTWARE", "input_server_id": srv, "input_stream_id": "cam"}))
	pub := testutil.FFmpeg(t, append(testutil.Source(1000), "-t", "3", "-f", "flv", rtmpURL(port, "cam"))...)
	if err := pub.Wait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 15*time.Second, "the file complete", func() bool {
		fs := ts.recordedFiles(rec)
		return len(fs) == 1 && fs[0].State == "complete"
	})
	f := ts.recordedFiles(rec)[0]
	full := filepath.Join(data, "recordings", filepath.FromSlash(f.Path))
	if strings.Contains(f.Path, "..") && strings.Contains(f.Path, "/..") || strings.HasPrefix(f.Path, ".") {
		t.Errorf("file path %q", f.Path)
	}
	if _, err := os.Stat(full); err != nil || !strings.HasPrefix(full, filepath.Join(data, "recordings")+string(filepath.Separator)) {
		t.Errorf("file %q (%v) not inside the recordings folder", full, err)
	}

	for _, p := range []string{
		"../../keep.txt", "..%2F..%2Fkeep.txt", "%2e%2e%2fkeep.txt", "....//keep.txt",
		"6b01e00b59b9e1c5ddd887e5", f.ID + "%2F..%2F..%2Fkeep.txt", url.PathEscape("/etc/passwd"),
	} {
		resp, body := ts.get("/api/recording/download/"+p, nil)
		if resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusBadRequest {
			t.Errorf("download %q: status %d: %.100s", p, resp.StatusCode, body)
		}
		if strings.Contains(string(body), "precious") {
			t.Errorf("download %q served a file outside the recordings folder", p)
		}
	}
	for _, body := range []map[string]any{
		{"record_id": rec, "file_id": "../../keep.txt"},
		{"record_id": "../..", "file_id": f.ID},
		{"record_id": rec, "file_id": "/etc/passwd"},
	} {
		ts.call("/api/recording/removeFile", body, http.StatusBadRequest, nil)
	}
	other := ts.create("recording", recordingBody("other", map[string]any{"input_type": "INPUT_TYPE_GENERATE_TEST_VIDEO"}))
	ts.call("/api/recording/removeFile", map[string]any{"record_id": other, "file_id": f.ID}, http.StatusNotFound, nil)
	ts.call("/api/recording/stop", map[string]any{"id": other}, http.StatusOK, nil)

	if b, err := os.ReadFile(outside); err != nil || string(b) != "precious" {
		t.Errorf("file outside the recordings folder touched: %q %v", b, err)
	}
	if _, err := os.Stat(full); err != nil {
		t.Errorf("recorded file gone after refused removals: %v", err)
	}
}

// TestRecordingTranscoded records the test stream through the transcode stage: the file has
// the asked codec and size.
func TestRecordingTranscoded(t *testing.T) {
	testutil.RequireFFmpeg(t)
	data := t.TempDir()
	ts := startServer(t, data, nil)
	defer ts.stop()
	body := recordingBody("small", map[string]any{"input_type": "INPUT_TYPE_GENERATE_TEST_VIDEO",
		"resolution_width": 640, "resolution_height": 360, "test_video_bitrate": 800, "encoding_rate": 25})
	body["output_format"] = "mkv"
	ts.call("/api/recording/create", body, http.StatusBadRequest, nil)
	body["output_format"] = "mp4"
	body["transcoding"] = map[string]any{"video_transcoding": "libx265", "frame_width": 320, "frame_height": 180,
		"preset": "ultrafast", "output_video_bitrate": 300}
	rec := ts.create("recording", body)
	testutil.Eventually(t, 60*time.Second, "6 s recorded", func() bool {
		fs := ts.recordedFiles(rec)
		return len(fs) == 1 && fs[0].Duration >= 6
	})
	ts.call("/api/recording/stop", map[string]any{"id": rec}, http.StatusOK, nil)
	fs := ts.recordedFiles(rec)
	if len(fs) != 1 || fs[0].State != "complete" {
		t.Fatalf("files after stop: %+v", fs)
	}
	p := testutil.FFprobe(t, filepath.Join(data, "recordings", filepath.FromSlash(fs[0].Path)), false)
	if len(p.Streams) != 2 || p.Streams[0].CodecName != "hevc" || p.Streams[0].Width != 320 || p.Streams[0].Height != 180 {
		t.Errorf("transcoded recording streams %+v, want hevc 320x180 and audio", p.Streams)
	}
}

// TestRecordingFolderNotWritable: a recordings folder that cannot be made shows as the
// recording's last_error; once it can, the recorder writes without being restarted by hand.
func TestRecordingFolderNotWritable(t *testing.T) {
	testutil.RequireFFmpeg(t)
	data := t.TempDir()
	ts := startServer(t, data, nil)
	defer ts.stop()
	// A file where the recording's folder should be: mkdir fails whoever runs the test (root too).
	blocker := filepath.Join(data, "recordings", "blocked")
	if err := os.MkdirAll(filepath.Dir(blocker), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(blocker, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := ts.create("recording", recordingBody("blocked", map[string]any{"input_type": "INPUT_TYPE_GENERATE_TEST_VIDEO",
		"resolution_width": 320, "resolution_height": 180, "test_video_bitrate": 300}))
	var r struct {
		State     string `json:"state"`
		LastError string `json:"last_error"`
	}
	testutil.Eventually(t, 30*time.Second, "the folder error in last_error", func() bool {
		ts.call("/api/recording/getById", map[string]any{"id": rec}, http.StatusOK, &r)
		return strings.Contains(r.LastError, "not a directory")
	})
	t.Logf("recording: state %q, last_error %q", r.State, r.LastError)
	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 40*time.Second, "a file once the folder can be made", func() bool {
		fs := ts.recordedFiles(rec)
		return len(fs) == 1 && fs[0].Size > 0
	})
}
