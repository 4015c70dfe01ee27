package app

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// TestPlayerReadyEvent: player_ready comes once, when the player's first playlist is served:
// its time is within a second of the first 200 answer to a client polling the playlist every
// 100 ms, and the playlist then holds initial_live_manifest_size segments.
func TestPlayerReadyEvent(t *testing.T) {
	t.Parallel()
	ts := startFFmpegServer(t)
	c := ts.follow("module=vod&type=player_ready", "")
	defer c.close()
	vodPort := testutil.FreePort(t)
	body := playerBody("ev-ready", vodPort, tinyTestVideo())
	body["initial_live_manifest_size"] = 2
	id := ts.create("vod", body)
	url := fmt.Sprintf("http://127.0.0.1:%d/hls/%s/%s/index.m3u8", vodPort, id, id)

	var served time.Time
	var playlist string
	testutil.Eventually(t, 30*time.Second, "the first playlist", func() bool {
		code, pl := httpGet(t, url)
		if code == http.StatusOK {
			served, playlist = time.Now(), pl
			return true
		}
		time.Sleep(50 * time.Millisecond) // with Eventually's 50 ms: a look every 100 ms
		return false
	})
	ev := c.until(10*time.Second, "player_ready", isType("player_ready"))[0]
	at := eventTime(t, ev)
	t.Logf("player_ready at %s, first playlist served at %s: %v", at.Format(time.StampMilli), served.Format(time.StampMilli), served.Sub(at))
	if ev.Data["id"] != id || ev.Data["name"] != "ev-ready" || ev.Data["module"] != "MODULE_VOD" ||
		ev.Data["hls_path"] != fmt.Sprintf("/hls/%s/%s/index.m3u8", id, id) || ev.Data["segments"] != float64(2) {
		t.Errorf("player_ready data %v", ev.Data)
	}
	if d := served.Sub(at); d < -time.Second || d > time.Second {
		t.Errorf("player_ready at %v, the first playlist served at %v: not the first playlist", at, served)
	}
	if n := len(extinfs(playlist)); n < 2 {
		t.Errorf("first playlist has %d segments, want initial_live_manifest_size 2:\n%s", n, playlist)
	}
	// Once only: another player_ready would come with the next segment (2 s).
	select {
	case e, ok := <-c.events:
		if ok {
			t.Errorf("a second event %v %v", e, e.Data)
		}
	case <-time.After(3 * time.Second):
	}
}

// TestServerStatsEvent: with --event-stats-every 1s (SLUICE_EVENT_STATS_EVERY), a client of
// the stream gets server_stats every second, without an id (not kept), with getStat's figures.
func TestServerStatsEvent(t *testing.T) {
	t.Parallel()
	ts := startServerEnv(t, t.TempDir(), nil, func(k string) string {
		if k == "SLUICE_EVENT_STATS_EVERY" {
			return "1s"
		}
		return ""
	})
	defer ts.stop()
	c := ts.follow("type=server_stats", "")
	defer c.close()
	n := 0
	got := c.until(10*time.Second, "three server_stats", func(sseEvent) bool { n++; return n == 3 })
	for i, e := range got {
		st, _ := e.Data["stats"].(map[string]any)
		ram, _ := st["RAM"].(map[string]any)
		drive, _ := st["drive"].(map[string]any)
		if e.Type != "server_stats" || e.ID != 0 || e.Data["module"] != "MODULE_API" || e.Data["id"] != "api" ||
			st["cpuUsage"] == nil || ram["totalMemMb"] == nil || ram["totalMemMb"].(float64) <= 0 || drive["totalGb"] == nil {
			t.Errorf("server_stats %d: id %d, data %v", i, e.ID, e.Data)
		}
		if i > 0 {
			if gap := eventTime(t, e).Sub(eventTime(t, got[i-1])); gap < 500*time.Millisecond || gap > 2500*time.Millisecond {
				t.Errorf("server_stats %d came %v after the one before, want about 1 s", i, gap)
			}
		}
	}
}
