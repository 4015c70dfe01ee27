package app

import (
	"crypto/rand"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// garbage sends 2 MB of random bytes to a port: as datagrams for UDP, as one connection's
// stream for TCP (reconnecting when the server hangs up on it).
func garbage(t *testing.T, port int, transport string) {
	t.Helper()
	buf := make([]byte, 1316)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	sent := 0
	if transport == "UDP" {
		c, err := net.Dial("udp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for sent < 2<<20 {
			_, _ = rand.Read(buf)
			if _, err := c.Write(buf); err == nil {
				sent += len(buf)
			}
			if sent%(128<<10) < len(buf) {
				time.Sleep(time.Millisecond) // let the receiver breathe; loss is fine
			}
		}
		return
	}
	for attempts := 0; sent < 2<<20 && attempts < 200; attempts++ {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		for sent < 2<<20 {
			_, _ = rand.Read(buf)
			n, err := c.Write(buf)
			sent += n
			if err != nil {
				break
			}
		}
		c.Close()
	}
}

// TestRandomBytesToEveryListeningPort: 2 MB of noise to each listen input and server module
// leaves the server serving, and real publishers still get through afterwards.
func TestRandomBytesToEveryListeningPort(t *testing.T) {
	ts := startFFmpegServer(t)

	type target struct {
		port      int
		transport string
	}
	var targets []target
	listen := map[string]string{
		"INPUT_TYPE_SRT_LISTEN": "UDP", "INPUT_TYPE_UDP_LISTEN": "UDP",
		"INPUT_TYPE_RTMP_LISTEN": "TCP", "INPUT_TYPE_RTSP_LISTEN": "TCP", "INPUT_TYPE_HTTP_LISTEN": "TCP",
	}
	ids := map[string]string{}
	for kind, tr := range listen {
		p := testutil.FreePort(t)
		ids[kind] = ts.create("restream", restreamBody("noise-"+kind, listenInput(kind, p, tr)))
		targets = append(targets, target{p, tr})
	}
	rtmpPort, srtPort := testutil.FreePort(t), testutil.FreePort(t)
	rtmpMod := ts.create("rtmp-servers", map[string]any{"server_name": "noise-rtmp", "server_port": rtmpPort})
	srtMod := ts.create("srt-servers", map[string]any{"server_name": "noise-srt", "server_port": srtPort})
	targets = append(targets, target{rtmpPort, "TCP"}, target{srtPort, "UDP"})
	for _, tg := range targets {
		testutil.Eventually(t, 20*time.Second, fmt.Sprintf("port %d/%s bound", tg.port, tg.transport), func() bool {
			return (&Manager{}).PortBusy(storageKey(tg.port, tg.transport))
		})
	}

	for _, tg := range targets {
		garbage(t, tg.port, tg.transport)
	}

	resp, err := http.Get(ts.base + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz after noise: %v %v", err, resp)
	}
	resp.Body.Close()
	for _, mod := range []struct{ path, id string }{{"/api/rtmp-servers/getById", rtmpMod}, {"/api/srt-servers/getById", srtMod}} {
		waitState(t, ts, mod.path, mod.id, "running")
	}

	// Real publishers still work: UDP and RTMP listen inputs, and the RTMP module.
	var rec map[string]any
	ts.call("/api/restream/getById", map[string]any{"id": ids["INPUT_TYPE_UDP_LISTEN"]}, http.StatusOK, &rec)
	udpPort := portOf(rec)
	ts.call("/api/restream/getById", map[string]any{"id": ids["INPUT_TYPE_RTMP_LISTEN"]}, http.StatusOK, &rec)
	rtmpListen := portOf(rec)
	testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "mpegts", fmt.Sprintf("udp://127.0.0.1:%d?pkt_size=1316", udpPort))...)
	testutil.FFmpeg(t, append(testutil.Source(1000), "-f", "flv", rtmpURL(rtmpListen, "after-noise"))...)
	ts.checkBitrate("restream", ids["INPUT_TYPE_UDP_LISTEN"])
	ts.checkBitrate("restream", ids["INPUT_TYPE_RTMP_LISTEN"])
}

// portOf reads a restream's listen port from its record (input is an array on read).
func portOf(rec map[string]any) int {
	in := rec["input"].([]any)[0].(map[string]any)
	return int(in["input_stream_listen_port"].(map[string]any)["port"].(float64))
}
