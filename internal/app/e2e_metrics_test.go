package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// metricsToken is the --metrics-token of the metrics tests.
const metricsToken = "scrape-secret-0123"

// metricsEnv is an environment with the metrics token, and --metrics-addr when addr is set.
func metricsEnv(token, addr string) func(string) string {
	return func(k string) string {
		switch k {
		case "SLUICE_METRICS_TOKEN":
			return token
		case "SLUICE_METRICS_ADDR":
			return addr
		}
		return ""
	}
}

// scrape GETs url with the Authorization header auth (none when empty) and returns the status
// and body.
func scrape(t *testing.T, url, auth string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// prometheus is a Prometheus server started by a test.
type prometheus struct {
	base string
}

// startPrometheus runs Prometheus on loopback scraping target's /metrics every second with the
// bearer token; it stops when the test ends.
func startPrometheus(t *testing.T, target, token string) *prometheus {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: sluice
    metrics_path: /metrics
    authorization:
      type: Bearer
      credentials: %q
    static_configs:
      - targets: [%q]
`, token, target)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	port := testutil.FreePort(t)
	var logs bytes.Buffer
	cmd := exec.Command("prometheus", "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address=127.0.0.1:"+strconv.Itoa(port), "--log.level=warn")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start prometheus: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("prometheus log:\n%s", logs.String())
		}
	})
	p := &prometheus{base: fmt.Sprintf("http://127.0.0.1:%d", port)}
	testutil.Eventually(t, 30*time.Second, "prometheus ready", func() bool {
		resp, err := http.Get(p.base + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return p
}

// query runs an instant query and returns the value of each series by the label named key.
func (p *prometheus) query(t *testing.T, q, key string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(p.base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatalf("prometheus query %s: %v", q, err)
	}
	defer resp.Body.Close()
	var out struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Status != "success" {
		t.Fatalf("prometheus query %s: status %s %s (%v)", q, out.Status, out.Error, err)
	}
	vals := map[string]float64{}
	for _, r := range out.Data.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("prometheus query %s: value %v", q, r.Value)
		}
		vals[r.Metric[key]] = v
	}
	return vals
}

// eventuallyQuery waits until the query's series named by key satisfy ok.
func (p *prometheus) eventuallyQuery(t *testing.T, what, q, key string, ok func(map[string]float64) bool) map[string]float64 {
	t.Helper()
	var last map[string]float64
	testutil.Eventually(t, 60*time.Second, what+" ("+q+")", func() bool {
		last = p.query(t, q, key)
		return ok(last)
	})
	return last
}

// TestMetricsPrometheus: a real Prometheus scrapes sluice (on --metrics-addr, with the bearer
// token) while a test-stream player and an SRT-fed restream run; its query API shows their
// bitrates, their states and the SRT link, and the restream's stop in a later scrape.
// promtool accepts the exposition.
func TestMetricsPrometheus(t *testing.T) {
	testutil.RequireFFmpeg(t)
	testutil.RequireTools(t, "prometheus", "promtool")
	metricsAddr := "127.0.0.1:" + strconv.Itoa(testutil.FreePort(t))
	ts := startServerEnv(t, t.TempDir(), nil, metricsEnv(metricsToken, metricsAddr))
	defer ts.stop()

	vod := ts.create("vod", playerBody("pattern", testutil.FreePort(t), tinyTestVideo()))
	srtPort := testutil.FreePort(t)
	rs := ts.create("restream", restreamBody("srt-fed", listenInput("INPUT_TYPE_SRT_LISTEN", srtPort, "udp")))
	testutil.Eventually(t, 15*time.Second, "SRT listen port bound", func() bool {
		return (&Manager{}).PortBusy(storageKey(srtPort, "UDP"))
	})
	testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "mpegts", srtURL(srtPort, "streamid=cam"))...)

	prom := startPrometheus(t, metricsAddr, metricsToken)
	prom.eventuallyQuery(t, "both processes have a non-zero input bitrate",
		`sluice_process_input_bytes_per_second{id=~"`+vod+`|`+rs+`"}`, "id", func(v map[string]float64) bool {
			return v[vod] > 0 && v[rs] > 0
		})
	prom.eventuallyQuery(t, "both processes are running", `sluice_process_state{state="running"} == 1`, "id",
		func(v map[string]float64) bool { _, a := v[vod]; _, b := v[rs]; return a && b })
	kbps := prom.query(t, `sluice_process_input_bytes_per_second{module="MODULE_RESTREAM"}`, "name")["srt-fed"] * 8 / 1000
	if kbps < 0.5*sourceKbps || kbps > 2*sourceKbps {
		t.Errorf("restream input bitrate %.0f kbit/s, source %.0f kbit/s", kbps, sourceKbps)
	}
	prom.eventuallyQuery(t, "the SRT input link's packets", `sluice_srt_packets_received_total{module="MODULE_RESTREAM",role="input"}`, "id",
		func(v map[string]float64) bool { return v[rs] > 0 })
	prom.eventuallyQuery(t, "the player's segments", `sluice_player_segments_total`, "id",
		func(v map[string]float64) bool { return v[vod] > 0 })
	prom.eventuallyQuery(t, "an ffmpeg child (the test stream)", `sluice_child_processes`, "job",
		func(v map[string]float64) bool { return v["sluice"] >= 1 })

	ts.call("/api/restream/stop", map[string]any{"id": rs}, http.StatusOK, nil)
	prom.eventuallyQuery(t, "the stopped restream", `sluice_process_state{module="MODULE_RESTREAM",state="stopped"} == 1`, "id",
		func(v map[string]float64) bool { _, ok := v[rs]; return ok })
	if v := prom.query(t, `sluice_process_state{state="running"} == 1`, "id"); v[vod] != 1 {
		t.Errorf("the player is no longer running after the restream stopped: %v", v)
	}

	// promtool checks the exposition sluice serves.
	code, body := scrape(t, "http://"+metricsAddr+"/metrics", "Bearer "+metricsToken)
	if code != http.StatusOK {
		t.Fatalf("scrape: %d %s", code, body)
	}
	check := exec.Command("promtool", "check", "metrics")
	check.Stdin = strings.NewReader(body)
	if out, err := check.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestMetricsAuth: /metrics needs the token (bearer or basic-auth password): none or a wrong
// one answers 401; without --metrics-token it answers 404; with --metrics-addr the API port
// answers 404 and the metrics port serves. Requests are counted by route pattern, not path.
func TestMetricsAuth(t *testing.T) {
	ts := startServerEnv(t, t.TempDir(), nil, metricsEnv(metricsToken, ""))
	basic := func(user, pass string) string {
		r, _ := http.NewRequest(http.MethodGet, "http://x", nil)
		r.SetBasicAuth(user, pass)
		return r.Header.Get("Authorization")
	}
	for _, c := range []struct {
		auth string
		want int
	}{
		{"", http.StatusUnauthorized},
		{"Bearer wrong-token", http.StatusUnauthorized},
		{basic("prometheus", "wrong-token"), http.StatusUnauthorized},
		{"Bearer " + metricsToken[:len(metricsToken)-1], http.StatusUnauthorized},
		{"Bearer " + metricsToken, http.StatusOK},
		{basic("prometheus", metricsToken), http.StatusOK},
	} {
		if code, body := scrape(t, ts.base+"/metrics", c.auth); code != c.want {
			t.Errorf("Authorization %q: %d, want %d (%.200s)", c.auth, code, c.want, body)
		}
	}
	// Route patterns label the requests; the path's id and a failed login are counted.
	if code := ts.try("/api/vod/getById", map[string]any{"id": "no-such-id-4711"}); code != http.StatusBadRequest {
		t.Fatalf("getById of a malformed id: %d", code)
	}
	if code := ts.try("/api/auth/login", map[string]any{"email": "admin", "password": "wrong password"}); code != http.StatusUnauthorized {
		t.Fatalf("wrong login: %d", code)
	}
	if code, _ := scrape(t, ts.base+"/hls/some-player-id/some-player-id/index.m3u8", ""); code != http.StatusNotFound {
		t.Fatalf("playback of no player: %d", code)
	}
	if code, _ := scrape(t, ts.base+"/no/such/route-0815", ""); code != http.StatusNotFound {
		t.Fatalf("unknown path: %d", code)
	}
	_, body := scrape(t, ts.base+"/metrics", "Bearer "+metricsToken)
	for _, want := range []string{`sluice_api_requests_total{code="404",route="unmatched"} 1`, `sluice_api_requests_total{code="400",route="/api/vod/getById"} 1`,
		`sluice_api_requests_total{code="404",route="/hls/*"} 1`, `sluice_api_login_failures_total 1`,
		`sluice_api_request_duration_seconds_count{route="/api/auth/login"}`, "go_goroutines", "process_cpu_seconds_total"} {
		if !strings.Contains(body, want) {
			t.Errorf("exposition lacks %s\n%s", want, grepLines(body, "sluice_api"))
		}
	}
	for _, never := range []string{"no-such-id-4711", "some-player-id", "route-0815", "127.0.0.1"} {
		if strings.Contains(body, never) {
			t.Errorf("exposition carries %q: a path or an address became a label", never)
		}
	}
	ts.stop()

	off := startServer(t, t.TempDir(), nil)
	if code, _ := scrape(t, off.base+"/metrics", "Bearer "+metricsToken); code != http.StatusNotFound {
		t.Errorf("metrics without --metrics-token: %d, want 404", code)
	}
	off.stop()

	addr := "127.0.0.1:" + strconv.Itoa(testutil.FreePort(t))
	own := startServerEnv(t, t.TempDir(), nil, metricsEnv(metricsToken, addr))
	defer own.stop()
	if code, _ := scrape(t, own.base+"/metrics", "Bearer "+metricsToken); code != http.StatusNotFound {
		t.Errorf("API port with --metrics-addr: %d, want 404", code)
	}
	if code, _ := scrape(t, "http://"+addr+"/metrics", ""); code != http.StatusUnauthorized {
		t.Errorf("metrics port without a token: %d, want 401", code)
	}
	if code, _ := scrape(t, "http://"+addr+"/metrics", "Bearer "+metricsToken); code != http.StatusOK {
		t.Errorf("metrics port with the token: %d, want 200", code)
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// seriesValue returns the value of the series of family name whose labels include id="<id>"
// (and each of more), and whether there is one.
func seriesValue(body, name, id string, more ...string) (float64, bool) {
	for l := range strings.SplitSeq(body, "\n") {
		if !strings.HasPrefix(l, name+"{") || !strings.Contains(l, `id="`+id+`"`) {
			continue
		}
		ok := true
		for _, m := range more {
			ok = ok && strings.Contains(l, m)
		}
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
		return v, err == nil
	}
	return 0, false
}

// TestMetricsFigures: a recording's files and bytes, a transcoding player's ffmpeg (running,
// speed, CPU) and its playlist requests and served bytes reach the exposition.
func TestMetricsFigures(t *testing.T) {
	testutil.RequireFFmpeg(t)
	ts := startServerEnv(t, t.TempDir(), nil, metricsEnv(metricsToken, ""))
	defer ts.stop()
	rec := ts.create("recording", recordingBody("tape", tinyTestVideo()))
	body := playerBody("scaled", testutil.FreePort(t), tinyTestVideo())
	body["hls_fragment_size"], body["dash_fragment_size"] = 1, 1
	body["transcoding"] = map[string]any{"video_transcoding": "libx264", "frame_width": 96, "frame_height": 0,
		"preset": "ultrafast", "output_video_bitrate": 100, "gop": 10} // a key frame a second at 10 fps
	vod := ts.create("vod", body)

	playlist := fmt.Sprintf("%s/hls/%s/%s/index.m3u8", ts.base, vod, vod)
	testutil.Eventually(t, 60*time.Second, "the transcoded player's playlist", func() bool {
		code, _ := scrape(t, playlist, "")
		return code == http.StatusOK
	})
	var exp string
	want := func(name, id string, ok func(float64) bool, more ...string) bool {
		v, found := seriesValue(exp, name, id, more...)
		return found && ok(v)
	}
	pos := func(v float64) bool { return v > 0 }
	testutil.Eventually(t, 60*time.Second, "the recording's and the player's figures", func() bool {
		_, exp = scrape(t, ts.base+"/metrics", "Bearer "+metricsToken)
		return want("sluice_recording_files_total", rec, func(v float64) bool { return v == 1 }) &&
			want("sluice_recording_bytes_written_total", rec, pos) &&
			want("sluice_recording_write_errors_total", rec, func(v float64) bool { return v == 0 }) &&
			want("sluice_transcode_running", vod, func(v float64) bool { return v == 1 }) &&
			want("sluice_transcode_speed_ratio", vod, pos) &&
			want("sluice_transcode_cpu_seconds_total", vod, pos) &&
			want("sluice_player_playlist_requests_total", vod, pos) &&
			want("sluice_process_output_bytes_total", vod, pos) &&
			want("sluice_player_window_seconds", vod, pos) &&
			want("sluice_process_seconds_since_media", rec, func(v float64) bool { return v < 30 }) &&
			strings.Contains(exp, "\nsluice_child_processes 3\n") // two test streams, one transcoder
	})
}
