package mpegts

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/sluicemedia/sluice/internal/testutil"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/nal"
)

func TestDemuxFFmpeg(t *testing.T) {
	cases := []struct {
		vcodec, acodec string
		video, audio   media.Codec
		rate           int
		probeV, probeA string
	}{
		{"libx264", "aac", media.CodecH264, media.CodecAAC, 44100, "h264", "aac"},
		{"libx265", "aac", media.CodecH265, media.CodecAAC, 44100, "hevc", "aac"},
		{"libx264", "libmp3lame", media.CodecH264, media.CodecMP3, 44100, "h264", "mp3"},
		{"libx264", "libopus", media.CodecH264, media.CodecOpus, 48000, "h264", "opus"},
	}
	for _, tc := range cases {
		t.Run(tc.vcodec+"+"+tc.acodec, func(t *testing.T) {
			t.Parallel()
			ts := testutil.PatternFile(t, tc.vcodec, tc.acodec, "mpegts")
			d := NewDemuxer(bytes.NewReader(ts))
			tracks, err := d.Tracks()
			if err != nil {
				t.Fatalf("Tracks: %v", err)
			}
			if len(tracks) != 2 || tracks[0].Codec != tc.video || tracks[1].Codec != tc.audio {
				t.Fatalf("tracks %+v, want %v and %v", tracks, tc.video, tc.audio)
			}
			if p := tracks[0].Params; p.Width != 320 || p.Height != 240 {
				t.Errorf("video size %dx%d, want 320x240", p.Width, p.Height)
			}
			if a := tracks[1]; a.ClockRate != tc.rate || a.Params.SampleRate != tc.rate || a.Params.Channels != 1 {
				t.Errorf("audio clock %d, %d Hz, %d channels; want %d Hz mono", a.ClockRate, a.Params.SampleRate, a.Params.Channels, tc.rate)
			}
			aus := readAll(t, d)
			checkFFmpegUnits(t, tracks, aus)
			if s := d.Stats(); s != (Stats{}) {
				t.Errorf("stats on ffmpeg's stream: %+v", s)
			}

			// Remux what was read and let ffprobe decode it.
			out := filepath.Join(t.TempDir(), "remux.ts")
			if err := os.WriteFile(out, muxAll(t, tracks, aus), 0o600); err != nil {
				t.Fatal(err)
			}
			streams := testutil.ProbeFrames(t, out)
			if len(streams) != 2 || streams[0].CodecName != tc.probeV || streams[1].CodecName != tc.probeA {
				t.Fatalf("ffprobe streams %+v, want %s and %s", streams, tc.probeV, tc.probeA)
			}
			if s := streams[0]; s.Width != 320 || s.Height != 240 || s.NbReadFrames != "50" {
				t.Errorf("ffprobe video %dx%d, %s frames; want 320x240, 50", s.Width, s.Height, s.NbReadFrames)
			}
			if s := streams[1]; s.SampleRate != strconv.Itoa(tc.rate) {
				t.Errorf("ffprobe audio at %s Hz, want %d", s.SampleRate, tc.rate)
			}
		})
	}
}

// checkFFmpegUnits checks two seconds at 25 fps with a key frame every 25 frames, and
// increasing timestamps on every track.
func checkFFmpegUnits(t *testing.T, tracks []media.Track, aus []*media.AccessUnit) {
	t.Helper()
	frames, keys := 0, 0
	last := map[int]int64{}
	first := map[int]int64{}
	for i, au := range aus {
		if prev, ok := last[au.Track]; ok && au.DTS <= prev {
			t.Fatalf("unit %d of track %d: DTS %d after %d", i, au.Track, au.DTS, prev)
		}
		if _, ok := first[au.Track]; !ok {
			first[au.Track] = au.PTS
		}
		last[au.Track] = au.DTS
		if au.PTS < au.DTS {
			t.Errorf("unit %d: PTS %d before DTS %d", i, au.PTS, au.DTS)
		}
		if len(au.Payload) == 0 {
			t.Fatalf("unit %d: empty payload", i)
		}
		if au.Track == 0 {
			if frames == 0 && !au.Key {
				t.Errorf("first video unit is not a key frame")
			}
			frames++
			if au.Key {
				keys++
				var has [8]bool
				for _, n := range au.Payload {
					has[nal.Classify(tracks[0].Codec, n)] = true
				}
				if !has[nal.SPS] || !has[nal.PPS] || has[nal.AUD] {
					t.Errorf("key frame %d: SPS %v PPS %v AUD %v", frames, has[nal.SPS], has[nal.PPS], has[nal.AUD])
				}
			}
		}
	}
	t.Logf("%d video frames (%d key), %d audio units over %d ms", frames, keys, len(aus)-frames, media.Rescale(last[1]-first[1], tracks[1].ClockRate, 1000))
	if frames != 50 || keys != 2 {
		t.Errorf("%d video frames with %d key frames, want 50 with 2", frames, keys)
	}
	span := media.Rescale(last[1]-first[1], tracks[1].ClockRate, 1000)
	if span < 1800 || span > 2100 {
		t.Errorf("audio spans %d ms, want about 2000", span)
	}
}
