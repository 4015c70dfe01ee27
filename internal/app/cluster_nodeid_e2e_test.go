//go:build linux

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

	"github.com/sluicemedia/sluice/internal/cluster"
	"github.com/sluicemedia/sluice/internal/testutil"
)

// TestClusterKeptNodeID: a node started without --cluster-node-id makes an id, writes it to
// its data folder's node-id file and registers under it; killed (-9) and started again on the
// same folder, it registers under the same id and runs its player again at once, long before
// the player's lease (60 s here) would have expired, and the cluster lists one node, not two.
func TestClusterKeptNodeID(t *testing.T) {
	testutil.RequireFFmpeg(t)
	dbURL, _ := clusterDatabase(t)
	addr := "127.0.0.1:" + strconv.Itoa(testutil.FreePort(t))
	data := t.TempDir()
	const ttl = 60 * time.Second
	start := func() *clusterNodeProc {
		return startNode(t, dbURL, "", addr, data, "SLUICE_CLUSTER_LEASE_TTL="+ttl.String())
	}
	n := start()
	nodes := []*clusterNodeProc{n}
	t.Cleanup(func() { dumpClusterLogs(t, nodes) })
	b, err := os.ReadFile(filepath.Join(data, cluster.IDFile))
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(string(b))
	n.id = id
	if made := n.c.logged("made this node's id"); len(made) != 1 || !strings.Contains(made[0], "id="+id) {
		t.Errorf("log lines of the id made: %q, want one naming %s", made, id)
	}
	listed := func(n *clusterNodeProc) []string {
		req, _ := http.NewRequest(http.MethodGet, n.c.ts.base+"/api/nodes/getAll", nil)
		req.Header.Set("x-access-token", n.c.ts.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var list []struct {
			ID string `json:"id"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /api/nodes/getAll: %d, %v", resp.StatusCode, err)
		}
		var ids []string
		for _, l := range list {
			ids = append(ids, l.ID)
		}
		return ids
	}
	if ids := listed(n); len(ids) != 1 || ids[0] != id {
		t.Fatalf("nodes %q, want [%s]", ids, id)
	}

	input := map[string]any{"input_type": "INPUT_TYPE_GENERATE_TEST_VIDEO", "resolution_width": 160,
		"resolution_height": 90, "encoding_rate": 10, "test_video_bitrate": 100}
	player := n.c.ts.create("vod", playerBody("p", testutil.FreePort(t), input))
	running := func(n *clusterNodeProc) func() bool {
		return func() bool {
			r := n.view(t)[player]
			return r.State == "running" && r.Node == id
		}
	}
	testutil.Eventually(t, 20*time.Second, "the player running on "+id, running(n))

	n.c.kill()
	killed := time.Now()
	n = start()
	nodes = append(nodes, n)
	n.id = id
	testutil.Eventually(t, 20*time.Second, "the player running again on "+id, running(n))
	t.Logf("kill -9 and restart: the player ran again on %s after %v (lease TTL %v)", id,
		time.Since(killed).Round(time.Millisecond), ttl)
	if ids := listed(n); len(ids) != 1 || ids[0] != id {
		t.Errorf("nodes after the restart %q, want [%s]", ids, id)
	}
	if made := n.c.logged("made this node's id"); len(made) != 0 {
		t.Errorf("the restarted node made an id: %q", made)
	}
}
