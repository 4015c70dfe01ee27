package app

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// recordedFile is an entry of a recording's recordedFiles.
type recordedFile = testutil.RecordedFile

// recordedFiles returns a recording's files.
func (ts *testServer) recordedFiles(id string) []recordedFile {
	ts.t.Helper()
	return ts.calls().RecordedFiles(id)
}

// got is a GET's answer.
type got struct {
	StatusCode int
	Header     http.Header
}

// get fetches path from the API with the token, with extra headers.
func (ts *testServer) get(path string, hdr map[string]string) (got, []byte) {
	ts.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, ts.base+path, nil)
	req.Header.Set("x-access-token", ts.token)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return got{StatusCode: resp.StatusCode, Header: resp.Header}, b
}

// probeSeconds returns the duration ffprobe reads in a file, and its codec names.
func probeSeconds(t *testing.T, path string) (float64, []string) {
	t.Helper()
	p := testutil.FFprobe(t, path, false)
	d, err := strconv.ParseFloat(p.Format.Duration, 64)
	if err != nil {
		t.Fatalf("ffprobe %s: no duration (%q)", path, p.Format.Duration)
	}
	var codecs []string
	for _, s := range p.Streams {
		codecs = append(codecs, s.CodecName)
	}
	return d, codecs
}

// recordingFormats are the file formats a recording writes.
var recordingFormats = []string{"mp4", "mov", "avi", "flv"}

// recordEveryFormat makes an RTMP server module and a recording of its stream "cam" into each
// of recordingFormats, named prefix-format; it returns the module's port, the recordings'
// input, and their ids by format.
func recordEveryFormat(t *testing.T, ts *testServer, prefix string) (int, map[string]any, map[string]string) {
	t.Helper()
	port := testutil.FreePort(t)
	srv := ts.create("rtmp-servers", map[string]any{"server_name": "studio", "server_port": port})
	waitState(t, ts, "/api/rtmp-servers/getById", srv, "running")
	input := map[string]any{"input_type": "INPUT_TYPE_RTMP_SOFTWARE", "input_server_id": srv, "input_stream_id": "cam"}
	ids := map[string]string{}
	for _, f := range recordingFormats {
		body := recordingBody(prefix+"-"+f, input)
		body["output_format"] = f
		ids[f] = ts.create("recording", body)
	}
	return port, input, ids
}

// TestRecordingEveryFormat records two publishing sessions of a 10 s clip into every format
// and into memory, from the same RTMP server module stream.
func TestRecordingEveryFormat(t *testing.T) {
	testutil.RequireFFmpeg(t)
	data := t.TempDir()
	ts := startServer(t, data, nil)
	defer ts.stop()

	clip := filepath.Join(t.TempDir(), "clip.ts")
	testutil.MakeClip(t, clip, 10, 1000)
	sent, _ := probeSeconds(t, clip)

	port, input, ids := recordEveryFormat(t, ts, "rec")
	formats := recordingFormats
	mem := ts.create("recording", map[string]any{"recording_name": "rec-memory", "recording_type": "RECORDING_STREAM_TO_MEMORY",
		"memory_duration_sec": 6, "output_format": "mp4", "input": input})
	for _, id := range append(slices.Collect(mapValues(ids)), mem) {
		waitState(t, ts, "/api/recording/getById", id, "waiting")
	}

	for session := 1; session <= 2; session++ {
		pub := testutil.FFmpeg(t, "-re", "-i", clip, "-c", "copy", "-f", "flv", rtmpURL(port, "cam"))
		if session == 1 {
			// While the first session runs: the live bitrate, and growing files.
			ts.checkBitrate("recording", ids["mp4"])
			testutil.Eventually(t, 10*time.Second, "a growing mp4 file listed", func() bool {
				fs := ts.recordedFiles(ids["mp4"])
				return len(fs) == 1 && fs[0].State == "recording" && fs[0].Size > 0 && fs[0].Duration > 0
			})
		}
		if err := pub.Wait(60 * time.Second); err != nil {
			t.Fatalf("publisher %d: %v", session, err)
		}
		for _, f := range formats {
			testutil.Eventually(t, 15*time.Second, fmt.Sprintf("%s file %d complete", f, session), func() bool {
				fs := ts.recordedFiles(ids[f])
				return len(fs) == session && fs[session-1].State == "complete"
			})
		}
		time.Sleep(time.Second) // a gap between the sessions
	}

	wantCodecs := []string{"h264", "aac"}
	for _, f := range formats {
		files := ts.recordedFiles(ids[f])
		for i, e := range files {
			path := filepath.Join(data, "recordings", filepath.FromSlash(e.Path))
			if !strings.HasPrefix(e.Path, "rec-"+f+"/rec-"+f+"_") || !strings.HasSuffix(e.Path, "."+f) || e.Format != f || e.Ended == nil {
				t.Errorf("%s file %d: entry %+v", f, i, e)
			}
			st, err := os.Stat(path)
			if err != nil {
				t.Fatalf("%s file %d: %v", f, i, err)
			}
			if st.Size() != e.Size {
				t.Errorf("%s file %d: entry says %d bytes, disk has %d", f, i, e.Size, st.Size())
			}
			d, codecs := probeSeconds(t, path)
			t.Logf("%s file %d: ffprobe %.2f s (sent %.2f s), entry %.2f s, %d bytes, %v", f, i, d, sent, e.Duration, e.Size, codecs)
			if math.Abs(d-sent) > 0.5 {
				t.Errorf("%s file %d: ffprobe reads %.2f s, %.2f s were sent", f, i, d, sent)
			}
			if math.Abs(e.Duration-d) > 0.5 {
				t.Errorf("%s file %d: entry duration %.2f s, ffprobe %.2f s", f, i, e.Duration, d)
			}
			if !slices.Equal(codecs, wantCodecs) {
				t.Errorf("%s file %d: codecs %v, want %v", f, i, codecs, wantCodecs)
			}
		}
	}

	// Download returns the file's bytes, whole and by range.
	e := ts.recordedFiles(ids["mp4"])[0]
	disk, err := os.ReadFile(filepath.Join(data, "recordings", filepath.FromSlash(e.Path)))
	if err != nil {
		t.Fatal(err)
	}
	resp, body := ts.get("/api/recording/download/"+e.ID, nil)
	if resp.StatusCode != http.StatusOK || !bytes.Equal(body, disk) || resp.Header.Get("Content-Type") != "video/mp4" {
		t.Errorf("download: status %d, %d bytes (disk %d), type %q", resp.StatusCode, len(body), len(disk), resp.Header.Get("Content-Type"))
	}
	resp, body = ts.get("/api/recording/download/"+e.ID, map[string]string{"Range": "bytes=100-199"})
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(body, disk[100:200]) {
		t.Errorf("range download: status %d, %d bytes", resp.StatusCode, len(body))
	}

	// removeFile deletes the file and its entry.
	ts.call("/api/recording/removeFile", map[string]any{"record_id": ids["mp4"], "file_id": e.ID}, http.StatusOK, nil)
	if _, err := os.Stat(filepath.Join(data, "recordings", filepath.FromSlash(e.Path))); !os.IsNotExist(err) {
		t.Errorf("removed file still on disk: %v", err)
	}
	if fs := ts.recordedFiles(ids["mp4"]); len(fs) != 1 || fs[0].ID == e.ID {
		t.Errorf("files after removeFile: %+v", fs)
	}
	if resp, _ := ts.get("/api/recording/download/"+e.ID, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("download of a removed file: status %d", resp.StatusCode)
	}

	// The memory recording holds the last 6 s (whole GOPs of 1 s) of the second session.
	resp, body = ts.get("/api/recording/download-memory/"+mem, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("download-memory: status %d: %s", resp.StatusCode, body)
	}
	mp := filepath.Join(t.TempDir(), "memory.mp4")
	if err := os.WriteFile(mp, body, 0o644); err != nil {
		t.Fatal(err)
	}
	d, codecs := probeSeconds(t, mp)
	t.Logf("memory: ffprobe %.2f s, %d bytes, %v", d, len(body), codecs)
	if d < 5.5 || d > 7.5 || !slices.Equal(codecs, wantCodecs) {
		t.Errorf("memory download: %.2f s of %v, want about 6 s of %v", d, codecs, wantCodecs)
	}
}

// mapValues returns a map's values.
func mapValues[K comparable, V any](m map[K]V) func(func(V) bool) {
	return func(yield func(V) bool) {
		for _, v := range m {
			if !yield(v) {
				return
			}
		}
	}
}

// TestRecordingHighProfiles: H.264 in the High profiles that libx264 picks for 4:4:4, 4:2:2
// and 10-bit pictures (an encoder fed RGB, as OBS's or ffmpeg's test source, makes 4:4:4) is
// recorded into files that ffprobe reads with that format, in every format. The mp4 and mov
// recorders failed on 4:4:4 at every start ("file init segment without moov").
func TestRecordingHighProfiles(t *testing.T) {
	testutil.RequireFFmpeg(t)
	data := t.TempDir()
	ts := startServer(t, data, nil)
	defer ts.stop()
	port, _, ids := recordEveryFormat(t, ts, "high")
	formats := recordingFormats
	for _, f := range formats {
		waitState(t, ts, "/api/recording/getById", ids[f], "waiting")
	}
	pixFmts := []string{"yuv444p", "yuv422p", "yuv420p10le"}
	for session, pf := range pixFmts {
		args := append(testutil.Pattern{Realtime: true}.Args(), "-t", "3", "-c:v", "libx264", "-preset", "ultrafast",
			"-pix_fmt", pf, "-g", "25", "-c:a", "aac", "-f", "flv", rtmpURL(port, "cam"))
		if err := testutil.FFmpeg(t, args...).Wait(60 * time.Second); err != nil {
			t.Fatalf("publisher %s: %v", pf, err)
		}
		for _, f := range formats {
			testutil.Eventually(t, 15*time.Second, fmt.Sprintf("%s file of %s complete", f, pf), func() bool {
				fs := ts.recordedFiles(ids[f])
				return len(fs) == session+1 && fs[session].State == "complete"
			})
		}
		time.Sleep(time.Second) // a gap between the sessions
	}
	for _, f := range formats {
		for i, e := range ts.recordedFiles(ids[f]) {
			path := filepath.Join(data, "recordings", filepath.FromSlash(e.Path))
			p := testutil.FFprobe(t, path, false)
			d, _ := strconv.ParseFloat(p.Format.Duration, 64)
			var video []string
			for _, s := range p.Streams {
				if s.CodecType == "video" {
					video = append(video, s.CodecName, s.PixFmt, s.Profile)
				}
			}
			t.Logf("%s file %d: %.2f s, video %v", f, i, d, video)
			if len(video) != 3 || video[0] != "h264" || video[1] != pixFmts[i] || d < 2 {
				t.Errorf("%s file %d of %s: ffprobe reads %.2f s, video %v", f, i, pixFmts[i], d, video)
			}
		}
	}
}

// TestRecordingEncoderTiming: an RTMP publisher at 30 fps whose audio starts 2 s after its
// video (an encoder's audio device opened late) is recorded into an AVI file at 30 fps (its
// millisecond timestamps made it 29.97) and into mp4 and mov files whose duration ffprobe reads
// as what was sent (the late audio track made it 2 s longer).
func TestRecordingEncoderTiming(t *testing.T) {
	testutil.RequireFFmpeg(t)
	data := t.TempDir()
	ts := startServer(t, data, nil)
	defer ts.stop()
	port := testutil.FreePort(t)
	srv := ts.create("rtmp-servers", map[string]any{"server_name": "studio", "server_port": port})
	waitState(t, ts, "/api/rtmp-servers/getById", srv, "running")
	input := map[string]any{"input_type": "INPUT_TYPE_RTMP_SOFTWARE", "input_server_id": srv, "input_stream_id": "cam"}
	formats := []string{"mp4", "mov", "avi"}
	ids := map[string]string{}
	for _, f := range formats {
		body := recordingBody("timing-"+f, input)
		body["output_format"] = f
		ids[f] = ts.create("recording", body)
		waitState(t, ts, "/api/recording/getById", ids[f], "waiting")
	}
	const sent = 5.0
	pub := testutil.FFmpeg(t, "-re", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30",
		"-itsoffset", "2", "-re", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
		"-map", "0", "-map", "1", "-t", strconv.Itoa(int(sent)), "-c:v", "libx264", "-preset", "ultrafast", "-g", "30",
		"-c:a", "aac", "-f", "flv", rtmpURL(port, "cam"))
	if err := pub.Wait(60 * time.Second); err != nil {
		t.Fatalf("publisher: %v", err)
	}
	for _, f := range formats {
		testutil.Eventually(t, 15*time.Second, f+" file complete", func() bool {
			fs := ts.recordedFiles(ids[f])
			return len(fs) == 1 && fs[0].State == "complete"
		})
		path := filepath.Join(data, "recordings", filepath.FromSlash(ts.recordedFiles(ids[f])[0].Path))
		d, codecs := probeSeconds(t, path)
		out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v", "-show_entries", "stream=r_frame_rate",
			"-of", "csv=p=0", path).Output()
		if err != nil {
			t.Fatalf("%s: ffprobe: %v", f, err)
		}
		rate := strings.TrimSpace(string(out))
		t.Logf("%s: %.2f s (sent %.1f s), %v, video at %s fps", f, d, sent, codecs, rate)
		if !slices.Equal(codecs, []string{"h264", "aac"}) || math.Abs(d-sent) > 0.3 {
			t.Errorf("%s: ffprobe reads %.2f s of %v, %.1f s of h264 and aac were sent", f, d, codecs, sent)
		}
		if f == "avi" && rate != "30/1" {
			t.Errorf("avi: video at %s fps, 30/1 was sent", rate)
		}
	}
}
