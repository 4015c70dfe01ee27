//go:build linux

package app

import (
	"bufio"
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/tooling"
)

// TestClusterServeThroughAnyNode: a player and a file recording run on n2; n1 proxies
// (--cluster-playback proxy) and n3 redirects (the default). Through n1 a playlist, an init
// segment, a segment and a range of the recorded file are what n2 answers itself; through n3
// each is a 307 to n2, never cached, and following it gives the same. The file's row names
// n2 as its node, and the player's vod_port is bound by n2's process only.
func TestClusterServeThroughAnyNode(t *testing.T) {
	testutil.RequireFFmpeg(t)
	dbURL, db := clusterDatabase(t)

	addr := func() string { return "127.0.0.1:" + strconv.Itoa(testutil.FreePort(t)) }
	nodes := []*clusterNodeProc{nil, startNode(t, dbURL, "n2", addr(), t.TempDir()), nil}
	t.Cleanup(func() { dumpClusterLogs(t, nodes) })
	owner := nodes[1]
	input := map[string]any{"input_type": "INPUT_TYPE_GENERATE_TEST_VIDEO", "resolution_width": 160,
		"resolution_height": 90, "encoding_rate": 10, "test_video_bitrate": 100, "sound_hz": 1301}
	vodPort := testutil.FreePort(t)
	player := owner.c.ts.create("vod", playerBody("p", vodPort, input))
	rec := owner.c.ts.create("recording", recordingBody("rec", input))
	// Alone, n2 takes both; the other nodes join once they run there.
	testutil.Eventually(t, 20*time.Second, "player and recording running on n2", func() bool {
		for mod, id := range map[string]string{"vod": player, "recording": rec} {
			var r clusterRec
			owner.c.ts.call("/api/"+mod+"/getById", map[string]any{"id": id}, http.StatusOK, &r)
			if r.State != "running" || r.Node != "n2" {
				return false
			}
		}
		return true
	})
	nodes[0] = startNode(t, dbURL, "n1", addr(), t.TempDir(), "SLUICE_CLUSTER_PLAYBACK=proxy")
	nodes[2] = startNode(t, dbURL, "n3", addr(), t.TempDir())
	proxy, redirect := nodes[0], nodes[2]

	// The playlist: through n1 the owner's bytes and headers (it changes every 2 s: asked of
	// both until two answers a moment apart agree).
	base := fmt.Sprintf("/hls/%s/%s/", player, player)
	var playlist string
	testutil.Eventually(t, 30*time.Second, "the playlist through n1 equal to n2's", func() bool {
		code, hdr, direct := fetch(t, owner.c.ts.base+base+"index.m3u8", nil)
		if code != http.StatusOK {
			return false
		}
		pcode, phdr, proxied := fetch(t, proxy.c.ts.base+base+"index.m3u8", nil)
		if pcode != http.StatusOK || !bytes.Equal(direct, proxied) {
			return false
		}
		if phdr.Get("Cache-Control") != hdr.Get("Cache-Control") || phdr.Get("Content-Type") != hdr.Get("Content-Type") ||
			phdr.Values("Access-Control-Allow-Origin")[0] != "*" || len(phdr.Values("Access-Control-Allow-Origin")) != 1 {
			t.Errorf("playlist headers through n1 %v, n2's %v", phdr, hdr)
		}
		playlist = string(direct)
		return true
	})
	var files []string
	sc := bufio.NewScanner(strings.NewReader(playlist))
	for sc.Scan() {
		l := sc.Text()
		if i := strings.Index(l, `#EXT-X-MAP:URI="`); i >= 0 {
			files = append(files, strings.TrimSuffix(l[i+len(`#EXT-X-MAP:URI="`):], `"`))
		} else if l != "" && !strings.HasPrefix(l, "#") {
			files = append(files, l)
		}
	}
	if len(files) < 2 {
		t.Fatalf("playlist names %v:\n%s", files, playlist)
	}
	for _, name := range []string{files[0], files[len(files)-1]} {
		code, hdr, direct := fetch(t, owner.c.ts.base+base+name, nil)
		pcode, phdr, proxied := fetch(t, proxy.c.ts.base+base+name, nil)
		if code != http.StatusOK || pcode != http.StatusOK || len(direct) == 0 || !bytes.Equal(direct, proxied) ||
			phdr.Get("Cache-Control") != hdr.Get("Cache-Control") {
			t.Errorf("%s: through n1 %d (%d bytes, %q), from n2 %d (%d bytes, %q)", name, pcode, len(proxied),
				phdr.Get("Cache-Control"), code, len(direct), hdr.Get("Cache-Control"))
		}
		// Through n3: a redirect to n2, never cached; followed, the same bytes.
		rcode, rhdr, _ := fetch(t, redirect.c.ts.base+base+name, nil)
		loc := rhdr.Get("Location")
		if rcode != http.StatusTemporaryRedirect || loc != owner.c.ts.base+base+name || rhdr.Get("Cache-Control") != "no-store" {
			t.Errorf("%s through n3: %d, Location %q, Cache-Control %q", name, rcode, loc, rhdr.Get("Cache-Control"))
		} else if code, _, body := fetch(t, loc, nil); code != http.StatusOK || !bytes.Equal(body, direct) {
			t.Errorf("%s: the redirect's target answers %d, %d bytes", name, code, len(body))
		}
	}

	// The recorded file: its row names n2; a range of it through any node is n2's.
	var fileID string
	testutil.Eventually(t, 20*time.Second, "a recorded file", func() bool {
		fs := proxy.c.ts.recordedFiles(rec)
		if len(fs) == 0 || fs[0].Size < 2000 {
			return false
		}
		fileID = fs[0].ID
		return true
	})
	var node string
	if err := db.QueryRow(`SELECT node FROM recorded_files WHERE id = $1`, fileID).Scan(&node); err != nil || node != "n2" {
		t.Errorf("recorded file %s: node %q, %v; want n2", fileID, node, err)
	}
	path := "/api/recording/download/" + fileID
	rng := map[string]string{"Range": "bytes=0-1999"}
	code, _, direct := fetch(t, owner.c.ts.base+path, withToken(owner, rng))
	if code != http.StatusPartialContent || len(direct) != 2000 {
		t.Fatalf("download from n2: %d, %d bytes", code, len(direct))
	}
	if code, hdr, proxied := fetch(t, proxy.c.ts.base+path, withToken(proxy, rng)); code != http.StatusPartialContent || !bytes.Equal(proxied, direct) ||
		hdr.Get("Content-Disposition") == "" {
		t.Errorf("download through n1: %d, %d bytes, headers %v", code, len(proxied), hdr)
	}
	rcode, rhdr, _ := fetch(t, redirect.c.ts.base+path, withToken(redirect, rng))
	if loc := rhdr.Get("Location"); rcode != http.StatusTemporaryRedirect || loc != owner.c.ts.base+path || rhdr.Get("Cache-Control") != "no-store" {
		t.Errorf("download through n3: %d, Location %q, Cache-Control %q", rcode, loc, rhdr.Get("Cache-Control"))
	} else if code, _, body := fetch(t, loc, withToken(redirect, rng)); code != http.StatusPartialContent || !bytes.Equal(body, direct) {
		t.Errorf("download at the redirect's target with n3's token: %d, %d bytes", code, len(body))
	}
	// Without a token, no node forwards anything.
	if code, _, _ := fetch(t, proxy.c.ts.base+path, nil); code != http.StatusUnauthorized {
		t.Errorf("download through n1 without a token: %d, want 401", code)
	}
	// A request a node proxied is not forwarded again (no loops between nodes that disagree).
	if code, _, _ := fetch(t, redirect.c.ts.base+base+"index.m3u8", map[string]string{"X-Sluice-Forwarded": "1"}); code != http.StatusNotFound {
		t.Errorf("an already forwarded request through n3: %d, want 404", code)
	}

	// The vod_port is bound on the owner only.
	for _, n := range nodes {
		if has := listensOn(t, n.c.cmd.Process.Pid, vodPort); has != (n == owner) {
			t.Errorf("node %s: listens on the vod_port %d: %v", n.id, vodPort, has)
		}
	}

	// Removing a file through a node other than its holder deletes its bytes on the holder's
	// disk: at once when the holder runs, else when it runs again.
	removeFileElsewhere(t, dbURL, db, nodes, rec, fileID)

	// n2 goes down for good and is removed from the cluster.
	removeNodeForGood(t, db, nodes)
}

// removeNodeForGood: n2, killed, cannot be removed while its last heartbeat is within the
// lease TTL (409 NODE_RUNNING); once it is not live, removing it through n3 takes its file
// entries (each reported as file_removed) and its queued removals with it, and no node lists
// it any more.
func removeNodeForGood(t *testing.T, db *sql.DB, nodes []*clusterNodeProc) {
	n1, n2, n3 := nodes[0], nodes[1], nodes[2]
	held := func() []string {
		t.Helper()
		rows, err := db.Query(`SELECT id FROM recorded_files WHERE node = 'n2' ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		return ids
	}
	// n2's recorder, its last file removed, starts a new one at the next key frame.
	testutil.Eventually(t, 30*time.Second, "n2 holding a file entry", func() bool { return len(held()) > 0 })
	t.Logf("n2 holds %d file entries: %v", len(held()), held())
	n2.c.kill()
	st, raw := n3.c.ts.calls().Post("/api/nodes/remove", map[string]any{"id": "n2"})
	if st != http.StatusConflict || !strings.Contains(string(raw), `"NODE_RUNNING"`) {
		t.Fatalf("remove n2 just after its kill: %d %s; want 409 NODE_RUNNING", st, raw)
	}
	testutil.Eventually(t, 20*time.Second, "n2 not live", func() bool {
		for _, n := range n1.nodes(t) {
			if n.ID == "n2" {
				return !n.Live
			}
		}
		return false
	})
	files := held()
	var queued int
	if err := db.QueryRow(`SELECT COUNT(*) FROM file_removals WHERE node = 'n2'`).Scan(&queued); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Success bool `json:"success"`
		Files   int  `json:"files"`
		Queued  int  `json:"queued_removals"`
	}
	n3.c.ts.call("/api/nodes/remove", map[string]any{"id": "n2"}, http.StatusOK, &got)
	if !got.Success || got.Files != len(files) || got.Queued != queued {
		t.Errorf("remove n2: %+v; want %d files and %d queued removals", got, len(files), queued)
	}
	if left := held(); len(left) != 0 {
		t.Errorf("entries of n2's files left: %v", left)
	}
	// The events are stored by the hub's own loop, a moment after they are emitted.
	for _, id := range files {
		var n int
		testutil.Eventually(t, 5*time.Second, "the file_removed event of "+id, func() bool {
			return db.QueryRow(`SELECT COUNT(*) FROM events WHERE type = 'file_removed' AND doc LIKE '%' || $1 || '%'`, id).Scan(&n) == nil && n > 0
		})
		if n != 1 {
			t.Errorf("%d file_removed events of %s, want 1", n, id)
		}
	}
	for _, via := range []*clusterNodeProc{n1, n3} {
		for _, n := range via.nodes(t) {
			if n.ID == "n2" {
				t.Errorf("%s still lists n2: %+v", via.id, n)
			}
		}
	}
	n3.c.ts.call("/api/nodes/remove", map[string]any{"id": "n2"}, http.StatusNotFound, nil)
}

// removeFileElsewhere: with its holder n2 killed, the file fileID of recording rec is removed
// through n1: its entry goes at once, its bytes stay on n2's disk until n2 runs again, and go
// then. Back, n2 records a new file; removed through n3, it leaves n2's disk at once.
func removeFileElsewhere(t *testing.T, dbURL string, db *sql.DB, nodes []*clusterNodeProc, rec, fileID string) {
	n1, n2 := nodes[0], nodes[1]
	var path string
	for _, f := range n1.c.ts.recordedFiles(rec) {
		if f.ID == fileID {
			path = filepath.Join(n2.data, "recordings", filepath.FromSlash(f.Path))
		}
	}
	if _, err := os.Stat(path); path == "" || err != nil {
		t.Fatalf("file %s on n2's disk at %q: %v", fileID, path, err)
	}
	n2.c.kill()
	n1.c.ts.call("/api/recording/removeFile", map[string]any{"record_id": rec, "file_id": fileID}, http.StatusOK, nil)
	for _, f := range nodes[2].c.ts.recordedFiles(rec) {
		if f.ID == fileID {
			t.Errorf("file %s still listed through n3 after its removal through n1", fileID)
		}
	}
	var queued string
	if err := db.QueryRow(`SELECT node FROM file_removals WHERE file_id = $1`, fileID).Scan(&queued); err != nil || queued != "n2" {
		t.Errorf("the removal of %s queued for %q, %v; want n2", fileID, queued, err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("file %s gone from n2's disk while n2 was down: %v", fileID, err)
	}
	nodes[1] = startNode(t, dbURL, "n2", n2.addr, n2.data)
	n2 = nodes[1]
	testutil.Eventually(t, 20*time.Second, "the file removed through n1 gone from n2's disk", func() bool {
		_, err := os.Stat(path)
		return errors.Is(err, fs.ErrNotExist)
	})
	testutil.Eventually(t, 5*time.Second, "the queued removal done", func() bool {
		var n int
		return db.QueryRow(`SELECT COUNT(*) FROM file_removals`).Scan(&n) == nil && n == 0
	})

	// n2 took its leases back on its return (they had not expired) and records a new file: that
	// one, removed through n3 while n2 runs, leaves n2's disk at once.
	var again tooling.RecordedFile
	testutil.Eventually(t, 30*time.Second, "n2 writing a new file", func() bool {
		for _, f := range n2.c.ts.recordedFiles(rec) {
			var node string
			if f.ID != fileID && f.Size > 0 && db.QueryRow(`SELECT node FROM recorded_files WHERE id = $1`, f.ID).Scan(&node) == nil && node == "n2" {
				again = f
				return true
			}
		}
		return false
	})
	path = filepath.Join(n2.data, "recordings", filepath.FromSlash(again.Path))
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("file %s on n2's disk: %v", again.ID, err)
	}
	nodes[2].c.ts.call("/api/recording/removeFile", map[string]any{"record_id": rec, "file_id": again.ID}, http.StatusOK, nil)
	testutil.Eventually(t, 10*time.Second, "the file removed through n3 gone from n2's disk", func() bool {
		_, err := os.Stat(path)
		return errors.Is(err, fs.ErrNotExist)
	})
	// Both went through the queue (n2's recorder, told its entry is gone, only stops writing).
	// The line is logged just after the file goes, and reaches the test through a pipe.
	var lines []string
	testutil.Eventually(t, 5*time.Second, "n2 logging the second deletion", func() bool {
		lines = n2.c.logged("deleted a file removed through another node")
		return len(lines) >= 2
	})
	if len(lines) != 2 {
		t.Errorf("n2 logged %d deletions of files removed through other nodes, want 2: %q", len(lines), lines)
	}
}

// withToken adds node n's token to headers h.
func withToken(n *clusterNodeProc, h map[string]string) map[string]string {
	out := map[string]string{"x-access-token": n.c.ts.token}
	for k, v := range h {
		out[k] = v
	}
	return out
}

// fetch GETs url without following redirects and returns the status, headers and body.
func fetch(t *testing.T, url string, hdr map[string]string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	return resp.StatusCode, resp.Header, b
}

// listensOn tells whether process pid holds a listening TCP socket on port (IPv4 or IPv6).
func listensOn(t *testing.T, pid, port int) bool {
	t.Helper()
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(l)
			// sl local_address rem_address st ... inode (the tenth field); 0A is LISTEN.
			if len(f) < 10 || f[3] != "0A" {
				continue
			}
			if _, p, ok := strings.Cut(f[1], ":"); ok {
				if n, err := strconv.ParseInt(p, 16, 32); err == nil && int(n) == port {
					inodes[f[9]] = true
				}
			}
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), fd.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") && inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
			return true
		}
	}
	return false
}
