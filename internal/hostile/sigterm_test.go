package hostile

import (
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// SIGTERM with hanging clients (issue 13, item 3 and "Done when").
const (
	// shutdownBudget is --shutdown-timeout's default: the server exits within it.
	shutdownBudget = 10 * time.Second
	// exitSlack is what the process may take beyond the budget to exit once its work is done.
	exitSlack = 2 * time.Second
	// hangBytes is the download the stuck client asks for and never reads.
	hangBytes = 64 << 20
	// writeChunk is the most of a response the API writes under one deadline (docs/limits.md,
	// HTTP timeouts): what a download that is never read holds.
	writeChunk = 256 << 10
)

// recordedFile is an entry of a recording's recordedFiles.
type recordedFile = testutil.RecordedFile

// files returns a recording's files.
func (s *server) files(id string) []recordedFile {
	s.t.Helper()
	return s.calls().RecordedFiles(id)
}

// hang opens the two clients that used to hold a shutdown: a request whose body never comes
// whole, and a large download that is never read.
func (s *server) hang(t *testing.T) {
	t.Helper()
	body, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { body.Close() })
	fmt.Fprintf(body, "POST /api/vod/create HTTP/1.1\r\nHost: %s\r\nx-access-token: %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"vod_name\":", s.addr, s.token)
	dl, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dl.Close() })
	_ = dl.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(dl, "GET /api/utils/speedtest/download?bytes=%d HTTP/1.1\r\nHost: %s\r\n\r\n", hangBytes, s.addr)
}

// testSIGTERM: 10 processes run (5 recordings, 4 players and a restream; 8 read an RTMP
// module fed by ffmpeg, 2 run the test stream through their own ffmpeg child) while one client
// sends half a request body and another never reads a download. On SIGTERM the server exits
// within its 10 s budget, no process is still stopping at the deadline, no child outlives it,
// and at the next start every recording file is complete (not repaired). Then the processes
// restart and a real publisher and player work. internal/app TestSIGTERMWithHangingClients is
// the full version (10 ffmpeg-backed processes).
func testSIGTERM(t *testing.T) {
	data := t.TempDir()
	s := start(t, options{data: data})
	mod, rtmpPort := s.createOnPort("rtmp-servers", func(p int) map[string]any {
		return map[string]any{"server_name": "studio", "server_port": p}
	})
	s.waitState("rtmp-servers", mod, "running", 10*time.Second)
	cam := map[string]any{"input_type": "INPUT_TYPE_RTMP_SOFTWARE", "input_server_id": mod, "input_stream_id": "cam"}
	recording := func(name string, in map[string]any) map[string]any {
		return map[string]any{"recording_name": name, "recording_type": "RECORDING_STREAM_TO_FILE", "input": in, "output_format": "mp4"}
	}
	var recs []string
	for i := range 4 {
		recs = append(recs, s.create("recording", recording(fmt.Sprintf("rec-%d", i), cam)))
	}
	recs = append(recs, s.create("recording", recording("rec-test", tinyTestVideo())))
	var vods []string
	var vodPorts []int
	for i := range 3 {
		id, p := s.createOnPort("vod", func(p int) map[string]any { return playerBody(fmt.Sprintf("player-%d", i), p, cam) })
		vods, vodPorts = append(vods, id), append(vodPorts, p)
	}
	s.createOnPort("vod", func(p int) map[string]any { return playerBody("player-test", p, tinyTestVideo()) })
	s.create("restream", map[string]any{"restream_name": "copy", "input": cam,
		"output": map[string]any{"output_type": "OUTPUT_TYPE_UDP_URL", "output_stream_url": "udp://127.0.0.1:9"}})

	pub := publish(t, rtmpOut(rtmpPort, "cam")...)
	testutil.Eventually(t, 60*time.Second, "every recording writing", func() bool {
		for _, id := range recs {
			if fs := s.files(id); len(fs) != 1 || fs[0].Duration < 1 {
				return false
			}
		}
		return true
	})
	kids := s.children()
	if len(kids) < 2 {
		t.Fatalf("%d processes under the server, want the 2 test streams' ffmpeg", len(kids))
	}

	w := s.watch()
	s.hang(t)
	time.Sleep(2 * time.Second) // both clients in their handlers: one reading, one writing
	w.stop().check(t, s, budget(2*connBytes+writeChunk, "two hanging clients: a request, and a download's piece in flight"))

	started := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.exited:
	case <-time.After(3 * shutdownBudget):
		t.Fatalf("the server still runs %v after SIGTERM", 3*shutdownBudget)
	}
	took := time.Since(started)
	pub.Stop()
	t.Logf("the server exited %v after SIGTERM (budget %v) with %d children", took.Round(10*time.Millisecond), shutdownBudget, len(kids))
	if s.exitErr != nil {
		t.Errorf("the server's exit: %v", s.exitErr)
	}
	if took > shutdownBudget+exitSlack {
		t.Errorf("the server took %v to exit, over its %v budget", took, shutdownBudget)
	}
	testutil.CheckHeldShutdown(t, s.logged, kids)

	s = start(t, options{data: data})
	for _, id := range recs {
		fs := s.files(id)
		if len(fs) == 0 || fs[0].State != "complete" || fs[0].Ended == nil {
			t.Errorf("recording %s after SIGTERM: files %+v, want the first complete", id, fs)
		}
	}
	publish(t, rtmpOut(rtmpPort, "cam")...)
	playHLS(t, vods[0], vodPorts[0])
}
