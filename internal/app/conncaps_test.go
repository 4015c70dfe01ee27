package app

import (
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

func TestCapConnsTo(t *testing.T) {
	for _, c := range []struct {
		n     int
		files uint64
		share int
		want  int
	}{
		{1024, 0, 2, 1024}, {1024, 1 << 20, 2, 1024}, {1024, 2048, 2, 1024}, {1024, 1024, 2, 512},
		{1024, 1024, 4, 256}, {512, 3, 4, 1},
	} {
		if got := capConnsTo(c.n, c.files, c.share); got != c.want {
			t.Errorf("capConnsTo(%d, %d, 1/%d) = %d, want %d", c.n, c.files, c.share, got, c.want)
		}
	}
}

// TestPlayerPortCaps: a player's port keeps playerMaxPerAddr connections from one address. When
// they are all idle (here: silent, no request yet), the address's next connection is served in
// place of the one idle the longest, so idle connections cannot lock the port; another address
// is served too.
func TestPlayerPortCaps(t *testing.T) {
	ts := startServer(t, t.TempDir(), nil)
	defer ts.stop()
	srv := ts.create("rtmp-servers", map[string]any{"server_name": "caps", "server_port": testutil.FreePort(t)})
	vodPort := testutil.FreePort(t)
	ts.create("vod", playerBody("caps", vodPort, map[string]any{
		"input_type": "INPUT_TYPE_RTMP_SOFTWARE", "input_server_id": srv, "input_stream_id": "cam"}))
	addr := fmt.Sprintf("127.0.0.1:%d", vodPort)
	testutil.Eventually(t, 20*time.Second, "player port bound", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	var held []*testutil.KeepAlive
	for range playerMaxPerAddr {
		held = append(held, testutil.DialKeepAlive(t, "127.0.0.4", addr))
	}
	// The next one from the same address is served (the player's 404 while it has no
	// segments), and the oldest silent one is closed at once (a kept one would wait for its
	// headers for 10 s).
	if st, err := testutil.DialKeepAlive(t, "127.0.0.4", addr).Get("/hls/x/x/index.m3u8"); err != nil || st != http.StatusNotFound {
		t.Fatalf("a connection past the cap of an address whose connections are idle: %d, %v; want the player's 404", st, err)
	}
	if !held[0].ClosedNow(t) {
		t.Fatal("the oldest idle connection of the address is still open after its next one was served")
	}
	resp, err := http.Get("http://" + addr + "/hls/x/x/index.m3u8")
	if err != nil {
		t.Fatalf("another address while one is at its cap: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("another address: status %d, want the player's 404", resp.StatusCode)
	}
}
