package app

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/browser"
)

// consoleRun is what testdata/player/console.mjs reports.
type consoleRun struct {
	OK            bool              `json:"ok"`
	Reason        string            `json:"reason"`
	Steps         []json.RawMessage `json:"steps"`
	Token         string            `json:"token"`
	Leaks         []string          `json:"leaks"`
	CSPViolations []string          `json:"cspViolations"`
	PageErrors    []string          `json:"pageErrors"`
	ConsoleErrors []string          `json:"consoleErrors"`
	Prefilled     map[string]string `json:"prefilled"`
	Player        struct {
		VodName                 string         `json:"vod_name"`
		InitialLiveManifestSize int            `json:"initial_live_manifest_size"`
		LiveSyncDurationCount   int            `json:"live_sync_duration_count"`
		HLSFragmentSize         float64        `json:"hls_fragment_size"`
		HLSFragmentLength       float64        `json:"hls_fragment_length"`
		DASHFragmentSize        float64        `json:"dash_fragment_size"`
		DASHFragmentLength      float64        `json:"dash_fragment_length"`
		Transcoding             map[string]any `json:"transcoding"`
	} `json:"player"`
	Preview played `json:"preview"`
	Watch   struct {
		played
		Player   string            `json:"player"`
		Applied  map[string]string `json:"applied"`
		Settings string            `json:"settings"`
	} `json:"watch"`
	Dash struct {
		played
		Player  string            `json:"player"`
		Format  string            `json:"format"`
		Applied map[string]string `json:"applied"`
	} `json:"dash"`
	LiveState struct {
		StopCallMs         int `json:"stopCallMs"`
		ShownMs            int `json:"shownMs"`
		ShownAfterAnswerMs int `json:"shownAfterAnswerMs"`
		ListReads          int `json:"listReads"`
	} `json:"liveState"`
	EventStreams   int      `json:"eventStreams"`
	RestreamError  string   `json:"restreamError"`
	Download       string   `json:"download"`
	Shots          []string `json:"shots"`
	URLs           int      `json:"urls"`
	ElapsedSeconds float64  `json:"elapsedSeconds"`
}

// played is what the harness measured of a video element over its window.
type played struct {
	Advance float64 `json:"advance"`
	Frames  int     `json:"frames"`
	Wall    float64 `json:"wall"`
	Width   int     `json:"width"`
	Height  int     `json:"height"`
	Error   string  `json:"error"`
}

// consoleArtifacts is where the console test leaves its screenshots and the downloaded
// recording: $SLUICE_TEST_ARTIFACTS/console, or bin/test-artifacts/console in the module.
func consoleArtifacts(t *testing.T, harness string) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(filepath.Dir(harness)), "bin", "test-artifacts", "console")
	if d := os.Getenv("SLUICE_TEST_ARTIFACTS"); d != "" {
		dir = filepath.Join(d, "console")
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestConsoleInBrowser drives the web console in headless Chromium through a whole session
// (testdata/player/console.mjs): log-in, a player created through the form with the recommended
// values that runs and plays in the preview and on its own port's watch page with its hls.js
// settings applied and in its DASH variant, a restream whose API error shows at its field, a
// recording stopped, played and downloaded (ffprobed here), SRT and RTMP server pages, the
// speed test, the player stopped through the API showing stopped in the console's list from
// the event stream (within 1.5 s, with no read of the list), removal of everything and
// log-out; the token never appears in a URL or in a page's HTML.
func TestConsoleInBrowser(t *testing.T) {
	testutil.RequireFFmpeg(t)
	dir := browser.Require(t)
	harness := filepath.Join(dir, "console.mjs")
	out := consoleArtifacts(t, dir)
	ts := startServer(t, t.TempDir(), nil)
	defer ts.stop()
	vodPort, srtPort, rtmpPort := testutil.FreePort(t), testutil.FreePort(t), testutil.FreePort(t)

	chromium := browser.DefaultChromium
	if p := os.Getenv("SLUICE_CHROMIUM"); p != "" {
		chromium = p
	}
	start := time.Now()
	stdout, stderr, runErr := browser.RunNode(dir, 200*time.Second, harness, "--base", ts.base, "--password", "correct-horse-battery",
		"--vod-port", strconv.Itoa(vodPort), "--srt-port", strconv.Itoa(srtPort), "--rtmp-port", strconv.Itoa(rtmpPort),
		"--out", out, "--chromium", chromium)
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var r consoleRun
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
		t.Fatalf("console harness: %v (exit %v after %v)\nstdout:\n%s\nstderr:\n%s", err, runErr, time.Since(start), stdout.String(), stderr.String())
	}
	t.Logf("console harness: %.1f s, %d request URLs watched; artefacts in %s", r.ElapsedSeconds, r.URLs, out)
	for _, s := range r.Steps {
		t.Logf("step %s", s)
	}
	if len(r.ConsoleErrors) > 0 {
		t.Logf("console errors (not failures: failed requests while a player warms up show here): %q", r.ConsoleErrors)
	}
	if !r.OK || runErr != nil {
		t.Fatalf("console session failed: %s (exit %v); leaks %q; CSP violations %q; page errors %q\nstderr:\n%s",
			r.Reason, runErr, r.Leaks, r.CSPViolations, r.PageErrors, stderr.String())
	}

	// The form's recommended values, and the watch page applied the record's settings.
	want := map[string]string{"initial_live_manifest_size": "3", "live_sync_duration_count": "4", "hls_fragment_size": "3",
		"hls_fragment_length": "60", "dash_fragment_size": "3", "dash_fragment_length": "60"}
	for k, v := range want {
		if r.Prefilled[k] != v {
			t.Errorf("form prefilled %s=%q, want %q", k, r.Prefilled[k], v)
		}
	}
	// The record the form created holds those values and no transcoding (the section was left
	// off), and the watch page applied the record's settings.
	p := r.Player
	if p.VodName != "lobby" || p.InitialLiveManifestSize != 3 || p.LiveSyncDurationCount != 4 || p.HLSFragmentSize != 3 ||
		p.HLSFragmentLength != 60 || p.DASHFragmentSize != 3 || p.DASHFragmentLength != 60 || len(p.Transcoding) != 0 {
		t.Errorf("player created by the form: %+v", p)
	}
	applied := r.Watch.Applied
	if applied["initialLiveManifestSize"] != strconv.Itoa(p.InitialLiveManifestSize) ||
		applied["liveSyncDurationCount"] != strconv.Itoa(p.LiveSyncDurationCount) {
		t.Errorf("watch page applied %v, want the record's initial_live_manifest_size %d and live_sync_duration_count %d (%q)",
			applied, p.InitialLiveManifestSize, p.LiveSyncDurationCount, r.Watch.Settings)
	}
	for name, p := range map[string]played{"preview": r.Preview, "watch page": r.Watch.played, "DASH watch page": r.Dash.played} {
		if p.Advance < 5 || p.Frames < 50 || p.Error != "" || p.Width != 640 || p.Height != 360 {
			t.Errorf("%s: %+v, want ≥ 5 s played, ≥ 50 frames decoded at 640x360, no error", name, p)
		}
	}
	if !strings.HasPrefix(r.Dash.Player, "dash.js ") || r.Dash.Format != "dash" ||
		r.Dash.Applied["liveDelayFragmentCount"] != strconv.Itoa(p.LiveSyncDurationCount) {
		t.Errorf("DASH watch page: player %q, format %q, applied %v; want dash.js with liveDelayFragmentCount %d",
			r.Dash.Player, r.Dash.Format, r.Dash.Applied, p.LiveSyncDurationCount)
	}
	// The list followed the event stream: the stop showed without a read of the list, well
	// within the 2 s the console polls at only while the stream is down.
	t.Logf("player stopped through the API: answered in %d ms, shown in the list %d ms after the call", r.LiveState.StopCallMs, r.LiveState.ShownMs)
	if r.LiveState.ListReads != 0 || r.LiveState.ShownAfterAnswerMs > 1500 || r.EventStreams == 0 {
		t.Errorf("live state: %+v, %d event stream requests; want the stop shown ≤ 1.5 s after the API answered, no list read, the stream used",
			r.LiveState, r.EventStreams)
	}
	if !strings.Contains(r.RestreamError, "srt://") {
		t.Errorf("restream field error %q, want the API's message about srt:// URLs", r.RestreamError)
	}

	// The downloaded recording is a whole mp4 with the test picture.
	probe := testutil.FFprobe(t, r.Download, false)
	var video bool
	for _, s := range probe.Streams {
		video = video || (s.CodecName == "h264" && s.Width == 640 && s.Height == 360)
	}
	dur, _ := strconv.ParseFloat(probe.Format.Duration, 64)
	if !video || dur < 4 {
		t.Errorf("downloaded %s: streams %+v, duration %v; want h264 640x360 of ≥ 4 s", r.Download, probe.Streams, probe.Format.Duration)
	}

	for _, name := range []string{"dashboard", "player", "watch", "watch-dash", "players-stopped", "restreams", "recordings", "srt-servers", "rtmp-servers", "speedtest", "phone-dashboard"} {
		if fi, err := os.Stat(filepath.Join(out, name+".png")); err != nil || fi.Size() < 2000 {
			t.Errorf("screenshot %s.png: %v", name, err)
		}
	}

	// Everything was removed through the console, and the logged-out token is dead.
	for _, m := range []string{"vod", "restream", "recording", "srt-servers", "rtmp-servers"} {
		var c struct{ Count int }
		ts.call("/api/"+m+"/getCount", nil, http.StatusOK, &c)
		if c.Count != 0 {
			t.Errorf("%s: %d records left after the console removed everything", m, c.Count)
		}
	}
	ts.token = r.Token
	ts.call("/api/vod/getAll", nil, http.StatusUnauthorized, nil)
}
