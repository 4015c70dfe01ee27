package testutil

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"testing"
)

// FrameStream is one stream of a file as ProbeFrames reads it.
type FrameStream struct {
	CodecName    string `json:"codec_name"`
	Width        int    `json:"width"`
	Height       int    `json:"height"`
	NbReadFrames string `json:"nb_read_frames"` // frames ffprobe decoded
	SampleRate   string `json:"sample_rate"`
}

// ProbeFrames has ffprobe decode every frame of the file at path and returns its streams. The
// test fails when ffprobe fails or reports anything (a frame it could not decode).
func ProbeFrames(t testing.TB, path string) []FrameStream {
	t.Helper()
	RequireFFmpeg(t) // and ffprobe
	cmd := exec.Command("ffprobe", "-v", "error", "-count_frames", "-show_streams", "-of", "json", path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("ffprobe %s: %v\n%s", path, err, stderr.Bytes())
	}
	var res struct{ Streams []FrameStream }
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("ffprobe %s output: %v", path, err)
	}
	return res.Streams
}
