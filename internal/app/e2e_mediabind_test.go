package app

import (
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// boundOn tells whether the port is taken on host (binding it there fails), as the Manager
// probes it with --media-bind host.
func boundOn(host string, port int, transport string) bool {
	return (&Manager{bind: host}).PortBusy(storageKey(port, transport))
}

// TestMediaBind: with --media-bind 127.0.0.2 a player's port, every listen input and both
// server modules bind 127.0.0.2 only: their ports are taken there and free on 127.0.0.1; a
// player answers on 127.0.0.2; and a port another program holds on 127.0.0.2 is refused with
// PORT_TAKEN while one it holds on 127.0.0.1 only is not.
func TestMediaBind(t *testing.T) {
	testutil.RequireFFmpeg(t)
	const bind = "127.0.0.2"
	ts := startServerEnv(t, t.TempDir(), nil, func(k string) string {
		if k == "SLUICE_MEDIA_BIND" {
			return bind
		}
		return ""
	})
	defer ts.stop()

	type target struct {
		what      string
		port      int
		transport string
	}
	var targets []target
	for kind, tr := range map[string]string{
		"INPUT_TYPE_SRT_LISTEN": "UDP", "INPUT_TYPE_UDP_LISTEN": "UDP",
		"INPUT_TYPE_RTMP_LISTEN": "TCP", "INPUT_TYPE_RTSP_LISTEN": "TCP", "INPUT_TYPE_HTTP_LISTEN": "TCP",
	} {
		p := testutil.FreePort(t)
		ts.create("restream", restreamBody("bind-"+kind, listenInput(kind, p, tr)))
		targets = append(targets, target{kind, p, tr})
	}
	rtmpPort, srtPort, vodPort := testutil.FreePort(t), testutil.FreePort(t), testutil.FreePort(t)
	ts.create("rtmp-servers", map[string]any{"server_name": "bind-rtmp", "server_port": rtmpPort})
	ts.create("srt-servers", map[string]any{"server_name": "bind-srt", "server_port": srtPort})
	ts.create("vod", playerBody("bind-player", vodPort, tinyTestVideo()))
	targets = append(targets, target{"rtmp module", rtmpPort, "TCP"}, target{"srt module", srtPort, "UDP"},
		target{"player", vodPort, "TCP"})

	for _, tg := range targets {
		testutil.Eventually(t, 20*time.Second, fmt.Sprintf("%s: port %d/%s bound on %s", tg.what, tg.port, tg.transport, bind), func() bool {
			return boundOn(bind, tg.port, tg.transport)
		})
		if boundOn("127.0.0.1", tg.port, tg.transport) {
			t.Errorf("%s: port %d/%s taken on 127.0.0.1 too; --media-bind %s should bind that address only", tg.what, tg.port, tg.transport, bind)
		}
	}

	url := fmt.Sprintf("http://%s:%d/hls/x/x/index.m3u8", bind, vodPort)
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("player on %s: %v", bind, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("player on %s: GET %s answered %d, want its JSON 404", bind, url, resp.StatusCode)
	}

	// Another program on the media address takes the port; on another address it does not.
	there, err := net.Listen("tcp", net.JoinHostPort(bind, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer there.Close()
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	ts.call("/api/vod/create", playerBody("clash", there.Addr().(*net.TCPAddr).Port, tinyTestVideo()), http.StatusConflict, &e)
	if e.Error.Code != "PORT_TAKEN" {
		t.Errorf("player on a port bound on %s: code %q, want PORT_TAKEN", bind, e.Error.Code)
	}
	elsewhere, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer elsewhere.Close()
	body := playerBody("beside", elsewhere.Addr().(*net.TCPAddr).Port, tinyTestVideo())
	body["active"] = false
	ts.create("vod", body)
}
