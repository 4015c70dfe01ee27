package avi

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/testutil"
)

// strfBlockAlign reads the nBlockAlign of stream i's WAVEFORMATEX in an AVI file.
func strfBlockAlign(t *testing.T, b []byte, i int) int {
	t.Helper()
	lay, _, _ := scanBytes(t, b)
	return int(binary.LittleEndian.Uint16(b[lay.streams[i].strf+12:]))
}

// TestAudioBlockAlign: nBlockAlign is the codec's largest frame, as ffmpeg writes it for AAC
// (768 bytes a channel): VLC cannot time AAC whose nBlockAlign is 0 (issue 19). ffmpeg's own
// AVI of the same stream is the reference.
func TestAudioBlockAlign(t *testing.T) {
	for _, tc := range []struct {
		acodec string
		want   int
	}{{"aac", 768}, {"libmp3lame", mp3MaxFrameBytes}} {
		t.Run(tc.acodec, func(t *testing.T) {
			c := makeClip(t, "libx264", tc.acodec)
			path, _ := writeFile(t, c, Options{}, false)
			ours, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// The clip's sine is mono.
			if got := strfBlockAlign(t, ours, 1); got != tc.want || c.tracks[1].Params.Channels != 1 {
				t.Errorf("nBlockAlign %d for %d channels, want %d", got, c.tracks[1].Params.Channels, tc.want)
			}
			if tc.acodec != "aac" {
				return
			}
			ref := filepath.Join(t.TempDir(), "ffmpeg.avi")
			if err := testutil.FFmpeg(t, "-i", path, "-c", "copy", ref).Wait(time.Minute); err != nil {
				t.Fatalf("ffmpeg remux: %v", err)
			}
			theirs, err := os.ReadFile(ref)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := strfBlockAlign(t, ours, 1), strfBlockAlign(t, theirs, 1); got != want {
				t.Errorf("nBlockAlign %d, ffmpeg writes %d", got, want)
			}
		})
	}
}

// TestAudioGapSilence drops a second of audio in the middle of a clip: the gap is filled with
// silent frames, so that the audio after it stays in place (readers count an empty chunk as
// no frame once nBlockAlign is set), decodes without error, and the gap is silent.
func TestAudioGapSilence(t *testing.T) {
	for _, acodec := range []string{"aac", "libmp3lame"} {
		t.Run(acodec, func(t *testing.T) {
			c := makeClip(t, "libx264", acodec)
			// The file starts at the clip's first video unit; drop the audio of [2 s, 3 s).
			var units []*media.AccessUnit
			var origin int64 = -1
			for _, au := range c.units {
				if origin < 0 && au.Track == 0 {
					origin = au.DTS
				}
				t := time.Duration(media.Rescale(au.DTS-media.Rescale(origin, 90000, c.tracks[au.Track].ClockRate),
					c.tracks[au.Track].ClockRate, int(time.Second)))
				if au.Track == 1 && t >= 2*time.Second && t < 3*time.Second {
					continue
				}
				units = append(units, au)
			}
			cut := &clip{tracks: c.tracks, units: units, duration: c.duration}
			path, _ := writeFile(t, cut, Options{}, false)
			if msg := decodeErrors(t, path); msg != "" {
				t.Errorf("ffmpeg decoding: %s", msg)
			}
			// The audio stream still lasts the clip: every missing frame was replaced.
			p := exec.Command("ffprobe", "-v", "error", "-select_streams", "a", "-show_entries", "stream=duration",
				"-of", "csv=p=0", path)
			out, err := p.Output()
			if err != nil {
				t.Fatal(err)
			}
			d, err := strconv.ParseFloat(string(bytes.TrimSpace(out)), 64)
			if err != nil || d < c.duration-0.1 {
				t.Errorf("audio lasts %s s, the clip %.3f s", out, c.duration)
			}
			// Silent in the gap, the tone before and after it: the audio after the gap is in
			// its place.
			for _, w := range []struct {
				from, to float64
				silent   bool
			}{{1.2, 1.8, false}, {2.1, 2.9, true}, {3.2, 3.8, false}} {
				peak := peakDB(t, path, w.from, w.to)
				if w.silent != (peak < -80) {
					t.Errorf("%.1f-%.1f s: peak %.1f dB, silent %v", w.from, w.to, peak, w.silent)
				}
			}
		})
	}
}

var maxVolume = regexp.MustCompile(`max_volume: (-?[0-9.]+|-inf) dB`)

// peakDB returns the peak level of a file's audio between two times, in dB (-200 for digital
// silence), from ffmpeg's volumedetect.
func peakDB(t *testing.T, path string, from, to float64) float64 {
	t.Helper()
	out, err := exec.Command("ffmpeg", "-hide_banner", "-nostdin", "-ss", fmt.Sprint(from), "-t", fmt.Sprint(to-from),
		"-i", path, "-map", "0:a", "-af", "volumedetect", "-f", "null", "-").CombinedOutput()
	if err != nil {
		t.Fatalf("volumedetect: %v: %s", err, out)
	}
	m := maxVolume.FindSubmatch(out)
	if m == nil {
		t.Fatalf("volumedetect printed no max_volume: %s", out)
	}
	if string(m[1]) == "-inf" {
		return -200
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

// TestSilentAAC decodes the silent frame of every channel configuration with ffmpeg, in
// ADTS: no error, the configuration's channel count, and silence.
func TestSilentAAC(t *testing.T) {
	testutil.RequireFFmpeg(t)
	for chans := 1; chans <= 7; chans++ {
		t.Run(strconv.Itoa(chans), func(t *testing.T) {
			// AudioSpecificConfig: AAC LC (2), 48 kHz (index 3), channelConfiguration.
			asc := []byte{2<<3 | 3>>1, (3&1)<<7 | byte(chans)<<3}
			frame := silentAAC(asc)
			if frame == nil {
				t.Fatal("no silent frame")
			}
			var adts []byte
			for range 50 {
				n := 7 + len(frame)
				// ADTS header without CRC: profile LC (1), index 3, the channel configuration.
				adts = append(adts, 0xff, 0xf1, 1<<6|3<<2|byte(chans>>2), byte(chans&3)<<6|byte(n>>11),
					byte(n>>3), byte(n&7)<<5|0x1f, 0xfc)
				adts = append(adts, frame...)
			}
			path := filepath.Join(t.TempDir(), "silence.aac")
			if err := os.WriteFile(path, adts, 0o644); err != nil {
				t.Fatal(err)
			}
			if msg := decodeErrors(t, path); msg != "" {
				t.Fatalf("ffmpeg decoding: %s", msg)
			}
			want := map[int]int{1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 8}[chans]
			out, err := exec.Command("ffprobe", "-v", "error", "-show_entries", "stream=channels", "-of", "csv=p=0", path).Output()
			if err != nil || string(bytes.TrimSpace(out)) != strconv.Itoa(want) {
				t.Errorf("ffprobe channels %q (%v), want %d", out, err, want)
			}
			if peak := peakDB(t, path, 0, 1); peak > -80 {
				t.Errorf("peak %.1f dB, want silence", peak)
			}
		})
	}
	for _, asc := range [][]byte{nil, {0x10}, {0xb9, 0x90}, {0xf8, 0x00, 0x00}} {
		if f := silentAAC(asc); f != nil {
			t.Errorf("silentAAC(%x) = %x, want nil: short, or an object type it cannot serve", asc, f)
		}
	}
}
