package app

import (
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// shortPublish is ffmpeg publishing as short a session as it makes: 0.1 s of video (three
// frames), sent as fast as it is encoded, in format to url.
func shortPublish(t *testing.T, format, url string) *testutil.Process {
	return testutil.FFmpeg(t, append(testutil.Pattern{Width: 320, Height: 180, Silent: true}.Args(), "-t", "0.1",
		"-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-f", format, url)...)
}

// TestPublisherEvents: on the RTMP and the SRT server module, every publishing session gets
// one publisher_connected and one publisher_disconnected, in order, with the record, the
// stream id and the publisher's address (the one getActiveStreams shows): two sessions
// shorter than 250 ms each, and one that ends with the publisher killed.
func TestPublisherEvents(t *testing.T) {
	t.Parallel()
	ts := startFFmpegServer(t)
	c := ts.follow("type=publisher_connected,publisher_disconnected", "")
	defer c.close()

	rport, sport := testutil.FreePort(t), testutil.FreePort(t)
	rtmpID := ts.create("rtmp-servers", map[string]any{"server_name": "ev-rtmp", "server_port": rport})
	// server_timeout 1 s: a killed SRT publisher sends no shutdown; its silence ends it.
	srtID := ts.create("srt-servers", map[string]any{"server_name": "ev-srt", "server_port": sport, "server_timeout": 1})
	waitState(t, ts, "/api/rtmp-servers/getById", rtmpID, "running")
	waitState(t, ts, "/api/srt-servers/getById", srtID, "running")

	var seen []sseEvent
	for _, m := range []struct {
		module, moduleName, id, name, streamID, format, url string
	}{
		{"rtmp-servers", "MODULE_RTMP_SERVERS", rtmpID, "ev-rtmp", "cam1", "flv", rtmpURL(rport, "cam1")},
		{"srt-servers", "MODULE_SRT_SERVERS", srtID, "ev-srt", "publisher/ev-srt/cam1", "mpegts", srtURL(sport, "streamid=publisher/ev-srt/cam1")},
	} {
		of := func(e sseEvent) bool { return e.Data["id"] == m.id }
		const short = 2
		for i := range short {
			if err := shortPublish(t, m.format, m.url).Wait(30 * time.Second); err != nil {
				t.Fatalf("%s: short publisher %d: %v", m.module, i, err)
			}
			seen = c.upTo(15*time.Second, fmt.Sprintf("%s short session %d", m.module, i), seen, 2*(i+1), of)
		}
		long := testutil.FFmpeg(t, append(testutil.Source(1000), "-f", m.format, m.url)...)
		seen = c.upTo(30*time.Second, m.module+" long session connected", seen, 2*short+1, of)
		var streams []struct {
			StreamID  string    `json:"stream_id"`
			Publisher string    `json:"publisher"`
			Since     time.Time `json:"since"`
			Bitrate   float64   `json:"bitrate"`
		}
		testutil.Eventually(t, 30*time.Second, m.module+" long session's media for a second", func() bool {
			ts.call("/api/"+m.module+"/getActiveStreams", map[string]any{"id": m.id}, http.StatusOK, &streams)
			return len(streams) == 1 && streams[0].Bitrate > 0 && time.Since(streams[0].Since) >= time.Second
		})
		// The encoder crashes.
		_ = syscall.Kill(-long.Cmd.Process.Pid, syscall.SIGKILL)
		seen = c.upTo(30*time.Second, m.module+" killed session disconnected", seen, 2*short+2, of)

		var mine []sseEvent
		for _, e := range seen {
			if of(e) {
				mine = append(mine, e)
			}
		}
		addrs := map[string]bool{}
		var lengths []time.Duration
		for i := 0; i < len(mine); i += 2 {
			on, off := mine[i], mine[i+1]
			addr, _ := on.Data["remote_address"].(string)
			for _, e := range []sseEvent{on, off} {
				if e.Data["module"] != m.moduleName || e.Data["name"] != m.name || e.Data["stream_id"] != m.streamID || e.Data["remote_address"] != addr {
					t.Errorf("%s session %d: event %v data %v, want %s %s stream %q from %s", m.module, i/2, e, e.Data, m.moduleName, m.name, m.streamID, addr)
				}
			}
			if on.Type != "publisher_connected" || off.Type != "publisher_disconnected" || !strings.HasPrefix(addr, "127.0.0.1:") || addrs[addr] || off.ID <= on.ID {
				t.Fatalf("%s session %d: %v then %v from %q; want connected then disconnected from one new loopback address; all %v", m.module, i/2, on, off, addr, mine)
			}
			addrs[addr] = true
			lengths = append(lengths, eventTime(t, off).Sub(eventTime(t, on)))
		}
		if long := mine[2*short]; len(streams) != 1 || streams[0].Publisher != long.Data["remote_address"] || streams[0].StreamID != m.streamID {
			t.Errorf("%s: getActiveStreams %+v while the long session of %v ran", m.module, streams, long.Data)
		}
		t.Logf("%s: session lengths by the events' times %v", m.module, lengths)
		if shortest := min(lengths[0], lengths[1]); shortest >= 250*time.Millisecond {
			t.Errorf("%s: no short session under 250 ms (%v): the test did not make one", m.module, lengths[:short])
		}
	}
}
