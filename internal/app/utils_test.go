package app

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/sysstats"
	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/storage"
)

// meminfo reads /proc/meminfo in kB.
func meminfo(t *testing.T) map[string]float64 {
	t.Helper()
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		n, _ := strconv.ParseFloat(strings.Fields(v)[0], 64)
		out[k] = n
	}
	return out
}

func TestServerStatMatchesTheKernel(t *testing.T) {
	runs := &fakeRunners{started: map[string]int{}}
	data := t.TempDir()
	ts := startServer(t, data, runs.factory)
	defer ts.stop()

	var raw map[string]json.RawMessage
	ts.call("/api/utils/getStat", nil, http.StatusOK, &raw)
	var st struct {
		CPUUsage float64 `json:"cpuUsage"`
		RAM      map[string]any
		Drive    map[string]any `json:"drive"`
	}
	b, _ := json.Marshal(raw)
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("getStat shape: %v: %s", err, b)
	}
	if st.CPUUsage < 0 || st.CPUUsage > 100 {
		t.Errorf("cpuUsage %v", st.CPUUsage)
	}
	// Types as the spec gives them: numbers for RAM, strings with two decimals for the drive.
	ram := map[string]float64{}
	for _, k := range []string{"totalMemMb", "usedMemMb", "freeMemMb", "usedMemPercentage", "freeMemPercentage"} {
		v, ok := st.RAM[k].(float64)
		if !ok {
			t.Fatalf("RAM.%s = %#v, want a number", k, st.RAM[k])
		}
		ram[k] = v
	}
	drive := map[string]float64{}
	for _, k := range []string{"totalGb", "usedGb", "freeGb", "usedPercentage", "freePercentage"} {
		s, ok := st.Drive[k].(string)
		if !ok || len(s) < 4 || s[len(s)-3] != '.' {
			t.Fatalf("drive.%s = %#v, want a string with two decimals", k, st.Drive[k])
		}
		drive[k], _ = strconv.ParseFloat(s, 64)
	}

	mi := meminfo(t)
	total := mi["MemTotal"] / 1024
	avail := mi["MemAvailable"] / 1024
	if math.Abs(ram["totalMemMb"]-total) > 1 {
		t.Errorf("totalMemMb %v, /proc/meminfo says %v", ram["totalMemMb"], total)
	}
	// Memory moves between the two reads; allow 2 % of the total.
	if math.Abs(ram["freeMemMb"]-avail) > 0.02*total {
		t.Errorf("freeMemMb %v, MemAvailable %v", ram["freeMemMb"], avail)
	}
	if math.Abs(ram["usedMemMb"]-(total-avail)) > 0.02*total {
		t.Errorf("usedMemMb %v, MemTotal-MemAvailable %v", ram["usedMemMb"], total-avail)
	}
	if math.Abs(ram["usedMemPercentage"]+ram["freeMemPercentage"]-100) > 0.02 {
		t.Errorf("percentages %v + %v", ram["usedMemPercentage"], ram["freeMemPercentage"])
	}

	var fs syscall.Statfs_t
	if err := syscall.Statfs(data, &fs); err != nil {
		t.Fatal(err)
	}
	const gb = 1 << 30
	used := float64(fs.Blocks-fs.Bfree) * float64(fs.Bsize) / gb
	free := float64(fs.Bavail) * float64(fs.Bsize) / gb
	if math.Abs(drive["usedGb"]-used) > 0.5 || math.Abs(drive["freeGb"]-free) > 0.5 {
		t.Errorf("drive used %v free %v GB, statfs says %.2f and %.2f", drive["usedGb"], drive["freeGb"], used, free)
	}
	if math.Abs(drive["totalGb"]-(used+free)) > 0.5 {
		t.Errorf("drive total %v GB, statfs used+avail %.2f", drive["totalGb"], used+free)
	}
	if math.Abs(drive["usedPercentage"]+drive["freePercentage"]-100) > 0.02 {
		t.Errorf("drive percentages %v + %v", drive["usedPercentage"], drive["freePercentage"])
	}
}

func TestSpeedTestBetweenTwoServers(t *testing.T) {
	runs := &fakeRunners{started: map[string]int{}}
	peer := startServer(t, t.TempDir(), runs.factory)
	defer peer.stop()

	// Without a target: 503 that says how to set one.
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	peer.call("/api/utils/speedtest", nil, http.StatusServiceUnavailable, &e)
	if e.Error.Code != "UNAVAILABLE" || !strings.Contains(e.Error.Message, "SLUICE_SPEEDTEST_URL") {
		t.Fatalf("no target: %+v", e)
	}

	t.Setenv("SLUICE_SPEEDTEST_URL", peer.base+"/api/utils/speedtest")
	ts := startServerEnv(t, t.TempDir(), runs.factory, Getenv)
	defer ts.stop()
	var res sysstats.SpeedResult
	ts.call("/api/utils/speedtest", nil, http.StatusOK, &res)
	t.Logf("latency %.2f ms jitter %.2f ms; down %.0f B/s (%d B in %.0f ms); up %.0f B/s (%d B in %.0f ms); iface %+v",
		res.Ping.Latency, res.Ping.Jitter, res.Download.Bandwidth, res.Download.Bytes, res.Download.Elapsed,
		res.Upload.Bandwidth, res.Upload.Bytes, res.Upload.Elapsed, res.Interface)
	if res.Ping.Latency <= 0 || res.Ping.Latency >= 50 || res.Ping.Jitter < 0 {
		t.Errorf("latency %v ms jitter %v ms", res.Ping.Latency, res.Ping.Jitter)
	}
	for name, d := range map[string]sysstats.SpeedTransfer{"download": res.Download, "upload": res.Upload} {
		if d.Bandwidth <= 0 || d.Bytes <= 0 || d.Elapsed <= 0 {
			t.Errorf("%s: %+v", name, d)
		}
		if got := float64(d.Bytes) / (d.Elapsed / 1000); math.Abs(got-d.Bandwidth) > 0.01*d.Bandwidth {
			t.Errorf("%s: bandwidth %v is not bytes/elapsed (%v)", name, d.Bandwidth, got)
		}
	}
	if res.Interface.InternalIP != "127.0.0.1" || res.Interface.Name == "" || res.ISP != "local network" {
		t.Errorf("interface %+v isp %q", res.Interface, res.ISP)
	}
	if res.Timestamp.IsZero() {
		t.Error("no timestamp")
	}
}

// TestListeningPortsWithAPlayerAndARestream: exactly the API port, the player's vod_port (TCP)
// and the restream's listen port with its transport.
func TestListeningPortsWithAPlayerAndARestream(t *testing.T) {
	ts := startFFmpegServer(t)
	vodPort, listenPort, stoppedPort := testutil.FreePort(t), testutil.FreePort(t), testutil.FreePort(t)
	ts.create("vod", playerBody("ports", vodPort, map[string]any{"input_type": "INPUT_TYPE_GENERATE_TEST_VIDEO",
		"resolution_width": 320, "resolution_height": 180, "test_video_bitrate": 300}))
	ts.create("restream", restreamBody("ports", listenInput("INPUT_TYPE_SRT_LISTEN", listenPort, "udp")))
	// A stopped restream holds its port claim but has nothing open.
	stopped := restreamBody("stopped", listenInput("INPUT_TYPE_UDP_LISTEN", stoppedPort, "udp"))
	stopped["active"] = false
	ts.create("restream", stopped)

	_, apiPort, _ := net.SplitHostPort(strings.TrimPrefix(ts.base, "http://"))
	want := fmt.Sprintf("[%s/TCP %d/TCP %d/UDP]", apiPort, vodPort, listenPort)
	var got string
	testutil.Eventually(t, 20*time.Second, "listening ports "+want, func() bool {
		var ports []storage.PortKey
		ts.call("/api/utils/getListeningPorts", nil, http.StatusOK, &ports)
		sort.Slice(ports, func(i, j int) bool { return ports[i].Port < ports[j].Port })
		var parts []string
		for _, p := range ports {
			parts = append(parts, fmt.Sprintf("%d/%s", p.Port, p.Transport))
		}
		sort.Strings(parts)
		got = "[" + strings.Join(parts, " ") + "]"
		w := strings.Fields(strings.Trim(want, "[]"))
		sort.Strings(w)
		return got == "["+strings.Join(w, " ")+"]"
	})
	var alias []storage.PortKey
	ts.call("/api/utils/getUsedPorts", nil, http.StatusOK, &alias)
	if len(alias) != 3 {
		t.Fatalf("getUsedPorts %v, want the same three ports", alias)
	}
}
