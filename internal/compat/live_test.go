package compat

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Eyevinn/mp4ff/mp4"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// aacFrame is an AAC frame at 48 kHz: the tolerance of audio and video alignment.
const aacFrame = 1024 * time.Second / 48000

// span is a segment's media of one track, from its first sample's presentation to the end of
// its last sample.
type span struct{ start, end time.Duration }

// get fetches a URL and returns its body.
func get(t *testing.T, url string) []byte {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d, %v", url, res.StatusCode, err)
	}
	return b
}

// hlsSpans downloads the init segment and the segments an HLS media playlist lists and
// returns each segment's video and audio spans, from their moof boxes.
func hlsSpans(t *testing.T, base string) (video, audio []span) {
	t.Helper()
	pl := string(get(t, base+"index.m3u8"))
	var init *mp4.InitSegment
	scales := map[uint32]uint64{}
	kinds := map[uint32]string{}
	for _, line := range strings.Split(pl, "\n") {
		if strings.HasPrefix(line, `#EXT-X-MAP:URI="`) {
			f, err := mp4.DecodeFile(bytes.NewReader(get(t, base+strings.TrimSuffix(strings.TrimPrefix(line, `#EXT-X-MAP:URI="`), `"`))))
			if err != nil || f.Init == nil {
				t.Fatalf("init segment: %v", err)
			}
			init = f.Init
			for _, trak := range init.Moov.Traks {
				scales[trak.Tkhd.TrackID] = uint64(trak.Mdia.Mdhd.Timescale)
				kinds[trak.Tkhd.TrackID] = trak.Mdia.Hdlr.HandlerType
			}
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if init == nil {
			t.Fatalf("a segment before EXT-X-MAP:\n%s", pl)
		}
		f, err := mp4.DecodeFile(bytes.NewReader(get(t, base+line)))
		if err != nil || len(f.Segments) == 0 {
			t.Fatalf("segment %s: %v", line, err)
		}
		var v, a span
		for _, frag := range f.Segments[0].Fragments {
			for _, traf := range frag.Moof.Trafs {
				id := traf.Tfhd.TrackID
				s := trafSpan(traf, scales[id])
				if kinds[id] == "vide" {
					v = s
				} else {
					a = s
				}
			}
		}
		video, audio = append(video, v), append(audio, a)
	}
	return video, audio
}

// trafSpan returns a track fragment's span: from its first sample's presentation time
// (decode time plus composition offset) over the sum of its sample durations.
func trafSpan(traf *mp4.TrafBox, scale uint64) span {
	base := int64(traf.Tfdt.BaseMediaDecodeTime())
	var dur, cto int64
	for i, trun := range traf.Truns {
		for j, s := range trun.Samples {
			if i == 0 && j == 0 {
				cto = int64(s.CompositionTimeOffset)
			}
			dur += int64(s.Dur)
		}
	}
	at := func(ticks int64) time.Duration { return time.Duration(ticks * int64(time.Second) / int64(scale)) }
	return span{at(base + cto), at(base + cto + dur)}
}

// mpd is the part of a DASH MPD the test reads.
type mpd struct {
	Periods []struct {
		Sets []struct {
			ContentType string `xml:"contentType,attr"`
			Template    struct {
				Timescale int64 `xml:"timescale,attr"`
				S         []struct {
					T int64 `xml:"t,attr"`
					D int64 `xml:"d,attr"`
					R int64 `xml:"r,attr"`
				} `xml:"SegmentTimeline>S"`
			} `xml:"SegmentTemplate"`
		} `xml:"AdaptationSet"`
	} `xml:"Period"`
}

// dashSpans returns the segments of the MPD's last period, video and audio, from their
// SegmentTimeline: what a DASH player schedules.
func dashSpans(t *testing.T, url string) (video, audio []span) {
	t.Helper()
	var m mpd
	if err := xml.Unmarshal(get(t, url), &m); err != nil || len(m.Periods) == 0 {
		t.Fatalf("MPD: %v", err)
	}
	for _, set := range m.Periods[len(m.Periods)-1].Sets {
		var spans []span
		var next int64
		scale := set.Template.Timescale
		at := func(ticks int64) time.Duration { return time.Duration(ticks * int64(time.Second) / scale) }
		for _, s := range set.Template.S {
			if s.T != 0 {
				next = s.T
			}
			for range s.R + 1 {
				spans = append(spans, span{at(next), at(next + s.D)})
				next += s.D
			}
		}
		if set.ContentType == "video" {
			video = spans
		} else {
			audio = spans
		}
	}
	return video, audio
}

// checkAligned asserts that each segment's audio starts and ends within one audio frame of its
// video (the audio of a segment runs from the first frame starting at or after its key frame).
func checkAligned(t *testing.T, what string, video, audio []span) {
	t.Helper()
	if len(video) < 3 || len(video) != len(audio) {
		t.Fatalf("%s: %d video and %d audio segments", what, len(video), len(audio))
	}
	for i := range video {
		v, a := video[i], audio[i]
		if d := a.start - v.start; d < -aacFrame || d > aacFrame {
			t.Errorf("%s segment %d: audio %v-%v, video %v-%v: starts %v apart", what, i, a.start, a.end, v.start, v.end, d)
		}
		if d := a.end - v.end; d < -aacFrame || d > aacFrame {
			t.Errorf("%s segment %d: audio %v-%v, video %v-%v: ends %v apart", what, i, a.start, a.end, v.start, v.end, d)
		}
	}
	t.Logf("%s: %d segments, audio within an AAC frame of the video (first %v-%v / %v-%v)",
		what, len(video), audio[0].start, audio[0].end, video[0].start, video[0].end)
}

// TestLiveSegmentsAligned (issue 19): live HLS and DASH of a player fed by the generated test
// stream, and of one fed by an RTMP publisher, cut each segment's audio with its video.
func TestLiveSegmentsAligned(t *testing.T) {
	testutil.RequireFFmpeg(t)
	s := startServer(t)
	for _, rtmp := range []bool{false, true} {
		name := map[bool]string{false: "test-stream", true: "rtmp"}[rtmp]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			id, ports := s.createOnPorts("vod", 2, func(ports []int) map[string]any {
				input := map[string]any{"input_type": "INPUT_TYPE_GENERATE_TEST_VIDEO",
					"resolution_width": 640, "resolution_height": 360, "encoding_rate": 25, "test_video_bitrate": 800}
				if rtmp {
					input = map[string]any{"input_type": "INPUT_TYPE_RTMP_LISTEN",
						"input_stream_listen_port": map[string]any{"port": ports[1], "transport": "tcp"}}
				}
				return map[string]any{
					"vod_name": "compat-" + name, "vod_port": ports[0], "input": input,
					"initial_live_manifest_size": 3, "live_sync_duration_count": 4,
					"hls_fragment_size": 2, "hls_fragment_length": 30, "dash_fragment_size": 2, "dash_fragment_length": 30,
				}
			})
			port := ports[0]
			if rtmp {
				waitListening(t, ports[1])
				testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "flv", fmt.Sprintf("rtmp://127.0.0.1:%d/live/cam", ports[1]))...)
			}
			base := fmt.Sprintf("http://127.0.0.1:%d/hls/%s/%s/", port, id, id)
			testutil.Eventually(t, 60*time.Second, "six segments listed", func() bool {
				res, err := http.Get(base + "index.m3u8")
				if err != nil {
					return false
				}
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				return res.StatusCode == http.StatusOK && strings.Count(string(b), "#EXTINF:") >= 6
			})
			video, audio := hlsSpans(t, base)
			checkAligned(t, "HLS", video, audio)
			video, audio = dashSpans(t, base+"index.mpd")
			checkAligned(t, "DASH", video, audio)
		})
	}
}
