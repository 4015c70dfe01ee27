package transcode

import (
	"strings"
	"testing"

	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
)

// The tests here run ffmpeg with the arguments Args builds, on a file, and check the
// output's properties with ffprobe and with the TS demuxer the server reads it with.

// h264240p is 4 s of 320x240 H.264 at 25 fps (a key frame a second) and AAC at 48 kHz.
func h264240p(t *testing.T) string {
	return fixture(t, "h264-240p", append(source(320, 240, 25, 4),
		"-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-pix_fmt", "yuv420p", "-b:v", "400k",
		"-c:a", "aac", "-b:a", "64k")...)
}

// streamOf returns the index and the probe of the output's first stream of a kind.
func streamOf(t *testing.T, p probed, kind string) int {
	t.Helper()
	for i, s := range p.Streams {
		if s.CodecType == kind {
			return i
		}
	}
	t.Fatalf("no %s stream in %+v", kind, p.Streams)
	return -1
}

// TestEncodePixFmts encodes with every pix_fmt of the spec and both software encoders: ffmpeg
// must not fail, and the stream has the chroma layout and depth asked for (the semi-planar
// names give their planar equivalent; the full-range yuvj names may decode as the yuv ones).
func TestEncodePixFmts(t *testing.T) {
	in := h264240p(t)
	same := map[string]string{"nv12": "yuv420p", "nv21": "yuv420p", "nv16": "yuv422p", "nv20le": "yuv422p10le"}
	for _, enc := range []string{"libx264", "libx265"} {
		for _, pf := range []string{"yuv420p", "yuvj420p", "yuv422p", "yuvj422p", "yuv444p", "yuvj444p", "nv12", "nv16",
			"nv21", "yuv420p10le", "yuv444p10le", "nv20le"} {
			t.Run(enc+"/"+pf, func(t *testing.T) {
				out := encode(t, &Settings{VideoTranscoding: enc, PixFmt: pf, Preset: "ultrafast"}, in)
				p := ffprobe(t, out)
				v := p.Streams[streamOf(t, p, "video")]
				want := pf
				if s, ok := same[pf]; ok {
					want = s
				}
				if got := strings.Replace(v.PixFmt, "yuvj", "yuv", 1); got != strings.Replace(want, "yuvj", "yuv", 1) {
					t.Errorf("pix_fmt %s, want %s", v.PixFmt, want)
				}
				tracks, _ := streamtest.ReadTS(t, out)
				if tr := trackOf(tracks, true); tr.Params.Width != 320 || tr.Params.Height != 240 {
					t.Errorf("the server reads %s %dx%d, want 320x240", tr.Codec, tr.Params.Width, tr.Params.Height)
				}
			})
		}
	}
}
