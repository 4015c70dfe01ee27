package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/procfs"
	"github.com/sluicemedia/sluice/internal/testutil"
)

// fixed is a Source that reports the same processes at every scrape.
type fixed []Process

func (f fixed) Processes() []Process { return f }

// everyKind is one process of each kind, with every part filled.
func everyKind(now time.Time) fixed {
	in := &Input{Bitrate: 1000, FPS: 25, BytesIn: 1 << 20, Readers: 2, Dropped: 3, Discontinuities: 1,
		Since: now.Add(-time.Minute), LastMedia: now.Add(-1500 * time.Millisecond)}
	link := Link{Role: "input", RTT: 2 * time.Millisecond, Latency: 200 * time.Millisecond, PeerLatency: 200 * time.Millisecond,
		BandwidthKbps: 8000, PacketsSent: 1, PacketsReceived: 1000, PacketsLost: 2, PacketsRetransmitted: 2, BytesReceived: 1 << 20}
	return fixed{
		{Module: "MODULE_VOD", ID: "p1", Name: "hall", State: "running", Input: in, BytesOut: 4096,
			Player:    &Player{Segments: 10, PlaylistRequests: 7, Window: 20 * time.Second, WindowBytes: 5 << 20},
			Transcode: &Transcode{Running: true, Speed: 1.01, FPS: 25, CPU: 3 * time.Second}},
		// Two links of one role: the second is left out rather than failing the scrape.
		{Module: "MODULE_RESTREAM", ID: "r1", Name: "relay", State: "reconnecting", Restarts: 4, Input: in, BytesOut: -1,
			Links: []Link{link, link}},
		{Module: "MODULE_RECORDING", ID: "c1", Name: "tape", State: "waiting", Input: &Input{},
			BytesOut: -1, Recording: &Recording{Files: 2, BytesWritten: 1 << 30, WriteErrors: 1, Repairs: 1}},
		{Module: "MODULE_SRT_SERVERS", ID: "s1", Name: "studio", State: "running", BytesOut: -1,
			Links:   []Link{{Role: "publisher", Stream: "cam1", RTT: time.Millisecond}},
			Streams: []Session{{Stream: "cam1", Since: now.Add(-time.Hour), BytesIn: 99, Bitrate: 800, Readers: 1}}},
		{Module: "MODULE_RTMP_SERVERS", ID: "m1", Name: "ingest", State: "stopped", BytesOut: -1},
	}
}

// serve returns a test server of m and a GET of its exposition with the token.
func serve(t *testing.T, m *Metrics) string {
	t.Helper()
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %d %s", resp.StatusCode, b)
	}
	return string(b)
}

// TestExposition: every family of the catalog is exported with its labels and the values the
// processes report, and promtool accepts the exposition.
func TestExposition(t *testing.T) {
	testutil.RequireTools(t, "promtool")
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m := New(Options{Token: "tok", Source: everyKind(now), Now: func() time.Time { return now }})
	m.Request("/api/vod/getAll", 200, 3*time.Millisecond)
	m.LoginFailed()
	body := serve(t, m)
	for _, c := range Catalog() {
		if !strings.Contains(body, "\n# TYPE "+c.Name+" "+c.Type+"\n") {
			t.Errorf("exposition lacks %s (%s)", c.Name, c.Type)
		}
	}
	for _, want := range []string{
		`sluice_process_state{id="r1",module="MODULE_RESTREAM",name="relay",state="reconnecting"} 1`,
		`sluice_process_state{id="r1",module="MODULE_RESTREAM",name="relay",state="running"} 0`,
		`sluice_process_state{id="m1",module="MODULE_RTMP_SERVERS",name="ingest",state="stopped"} 1`,
		`sluice_process_input_bytes_per_second{id="p1",module="MODULE_VOD",name="hall"} 125000`,
		`sluice_process_seconds_since_media{id="p1",module="MODULE_VOD",name="hall"} 1.5`,
		`sluice_process_restarts_total{id="r1",module="MODULE_RESTREAM",name="relay"} 4`,
		`sluice_process_output_bytes_total{id="p1",module="MODULE_VOD",name="hall"} 4096`,
		`sluice_srt_rtt_seconds{id="r1",module="MODULE_RESTREAM",name="relay",role="input",stream=""} 0.002`,
		`sluice_srt_rtt_seconds{id="s1",module="MODULE_SRT_SERVERS",name="studio",role="publisher",stream="cam1"} 0.001`,
		`sluice_server_stream_seconds{id="s1",module="MODULE_SRT_SERVERS",name="studio",stream="cam1"} 3600`,
		`sluice_player_window_seconds{id="p1",module="MODULE_VOD",name="hall"} 20`,
		`sluice_recording_repairs_total{id="c1",module="MODULE_RECORDING",name="tape"} 1`,
		`sluice_transcode_speed_ratio{id="p1",module="MODULE_VOD",name="hall"} 1.01`,
		`sluice_api_requests_total{code="200",route="/api/vod/getAll"} 1`,
		`sluice_api_login_failures_total 1`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("exposition lacks %s", want)
		}
	}
	// No output measured: no output series; a recording without media: no since-media series.
	for _, never := range []string{`sluice_process_output_bytes_total{id="r1"`, `sluice_process_seconds_since_media{id="c1"`} {
		if strings.Contains(body, never) {
			t.Errorf("exposition has %s", never)
		}
	}
	check := exec.Command("promtool", "check", "metrics")
	check.Stdin = strings.NewReader(body)
	if out, err := check.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestToken: the token as a bearer token or basic-auth password passes; anything else is 401.
func TestToken(t *testing.T) {
	m := New(Options{Token: "tok", Source: fixed{}})
	srv := httptest.NewServer(m)
	defer srv.Close()
	for _, c := range []struct {
		set  func(*http.Request)
		want int
	}{
		{func(*http.Request) {}, http.StatusUnauthorized},
		{func(r *http.Request) { r.Header.Set("Authorization", "Bearer tok") }, http.StatusOK},
		{func(r *http.Request) { r.Header.Set("Authorization", "bearer tok") }, http.StatusOK},
		{func(r *http.Request) { r.Header.Set("Authorization", "Bearer tok2") }, http.StatusUnauthorized},
		{func(r *http.Request) { r.Header.Set("Authorization", "Bearer ") }, http.StatusUnauthorized},
		{func(r *http.Request) { r.Header.Set("Authorization", "tok") }, http.StatusUnauthorized},
		{func(r *http.Request) { r.SetBasicAuth("anyone", "tok") }, http.StatusOK},
		{func(r *http.Request) { r.SetBasicAuth("tok", "") }, http.StatusUnauthorized},
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		c.set(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("Authorization %q: %d, want %d", req.Header.Get("Authorization"), resp.StatusCode, c.want)
		}
		if resp.StatusCode == http.StatusUnauthorized && resp.Header.Get("WWW-Authenticate") == "" {
			t.Error("401 without WWW-Authenticate")
		}
	}
}

// TestChildProcesses: with Options.Children, the children counted are the live ones listed: a
// listed process that was reaped, or one left a zombie, is not, and nor is a child of this
// process that is not listed.
func TestChildProcesses(t *testing.T) {
	start := func(args ...string) *exec.Cmd {
		c := exec.Command(args[0], args[1:]...)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
		return c
	}
	a, b := start("sleep", "30"), start("sleep", "30")
	start("sleep", "30") // a child of the test process, not listed
	reaped := start("true")
	_ = reaped.Wait()
	zombie := start("true") // never waited for until the cleanup
	testutil.Eventually(t, 5*time.Second, "the zombie", func() bool {
		st, err := procfs.ReadStat(zombie.Process.Pid)
		return err == nil && st.Zombie()
	})
	listed := []int{a.Process.Pid, b.Process.Pid, reaped.Process.Pid, zombie.Process.Pid}
	body := serve(t, New(Options{Token: "tok", Source: fixed{}, Children: func() []int { return listed }}))
	if !strings.Contains(body, "\nsluice_child_processes 2\n") {
		t.Errorf("want 2 child processes; exposition:\n%s", grepLines(body, "sluice_child_processes"))
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for l := range strings.Lines(s) {
		if strings.Contains(l, sub) {
			out = append(out, strings.TrimSuffix(l, "\n"))
		}
	}
	return strings.Join(out, "\n")
}
