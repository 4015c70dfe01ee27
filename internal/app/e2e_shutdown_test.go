package app

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/procfs"
	"github.com/sluicemedia/sluice/internal/testutil"
)

// hangingBody opens a request to the API that sends part of its body and never the rest.
func hangingBody(t *testing.T, addr, token string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST /api/vod/create HTTP/1.1\r\nHost: %s\r\nx-access-token: %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"vod_name\":", addr, token)
	return c
}

// stuckDownload opens a 64 MiB download from the API and never reads it.
func stuckDownload(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(c, "GET /api/utils/speedtest/download?bytes=%d HTTP/1.1\r\nHost: %s\r\n\r\n", 64<<20, addr)
	return c
}

// TestSIGTERMWithHangingClients: SIGTERM while one client sends half a body and never the
// rest, another downloads and never reads, and 10 processes run (4 players, 4 recordings, a
// passthrough and a transcoding restream, each on an ffmpeg test stream). The server exits
// within --shutdown-timeout (10 s), every recording file is complete (not repaired at the next
// start), no process was left stopping at the deadline, and no child outlives the server.
func TestSIGTERMWithHangingClients(t *testing.T) {
	testutil.RequireFFmpeg(t)
	data := t.TempDir()
	addr := "127.0.0.1:" + strconv.Itoa(testutil.FreePort(t))
	c := startChild(t, addr, data)
	var recs []string
	for i := range 4 {
		c.ts.createOnFreePort("vod", func(port int) map[string]any {
			return playerBody(fmt.Sprintf("player-%d", i), port, tinyTestVideo())
		})
		recs = append(recs, c.ts.create("recording", recordingBody(fmt.Sprintf("rec-%d", i), tinyTestVideo())))
	}
	c.ts.create("restream", restreamBody("copy", tinyTestVideo()))
	tr := restreamBody("transcode", tinyTestVideo())
	tr["transcoding"] = map[string]any{"video_transcoding": "libx264", "preset": "ultrafast", "output_video_bitrate": 100}
	trID := c.ts.create("restream", tr)

	testutil.Eventually(t, 90*time.Second, "every recording writing and the transcoder running", func() bool {
		for _, id := range recs {
			if fs := c.ts.recordedFiles(id); len(fs) != 1 || fs[0].Duration < 1 {
				return false
			}
		}
		var r map[string]any
		c.ts.call("/api/restream/getById", map[string]any{"id": trID}, http.StatusOK, &r)
		return r["state"] == "running"
	})
	pids, err := procfs.Descendants([]int{c.cmd.Process.Pid})
	if err != nil {
		t.Fatal(err)
	}
	kids := pids[1:]
	if len(kids) < 11 {
		t.Fatalf("%d processes under the server, want 10 test streams and a transcoder", len(kids))
	}

	hangingBody(t, addr, c.ts.token)
	stuckDownload(t, addr)
	time.Sleep(time.Second) // both in their handlers: one reading, one writing

	const budget = 10 * time.Second // --shutdown-timeout's default
	start := time.Now()
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- c.cmd.Wait() }()
	select {
	case err := <-exited:
		took := time.Since(start)
		t.Logf("server exited %v after SIGTERM (budget %v), with %d children before", took, budget, len(kids))
		if err != nil {
			t.Errorf("server exit: %v", err)
		}
		if took > budget+2*time.Second {
			t.Errorf("server took %v to exit, budget %v", took, budget)
		}
	case <-time.After(3 * budget):
		t.Fatalf("server still running %v after SIGTERM", 3*budget)
	}
	testutil.CheckHeldShutdown(t, c.logged, kids)

	c = startChild(t, addr, data)
	for _, id := range recs {
		fs := c.ts.recordedFiles(id)
		if len(fs) == 0 || fs[0].State != "complete" || fs[0].Ended == nil {
			t.Errorf("recording %s after SIGTERM: files %+v, want the first complete", id, fs)
		}
	}
}
