package app

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// TestLogFormatJSON: --log-format json writes one JSON object a line, and every line about a
// process (one that names its id) carries its module, id and name.
func TestLogFormatJSON(t *testing.T) {
	testutil.RequireFFmpeg(t)
	ts, out := startServerLogging(t, "--log-format", "json", "--log-level", "debug")
	rs := ts.create("restream", restreamBody("json-logs", tinyTestVideo()))
	testutil.Eventually(t, 30*time.Second, "restream running", func() bool {
		var rec map[string]any
		ts.call("/api/restream/getById", map[string]any{"id": rs}, 200, &rec)
		return rec["state"] == "running"
	})
	ts.call("/api/restream/stop", map[string]any{"id": rs}, 200, nil)
	ts.call("/api/restream/remove", map[string]any{"id": rs}, 200, nil)
	ts.stop()

	about := 0
	for line := range strings.SplitSeq(strings.TrimSpace(out.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %v\n%s", err, line)
		}
		if rec["time"] == nil || rec["level"] == nil || rec["msg"] == nil {
			t.Errorf("log line without time, level or msg: %s", line)
		}
		if !strings.Contains(line, rs) {
			continue
		}
		about++
		if rec["module"] != "MODULE_RESTREAM" || rec["id"] != rs || rec["name"] != "json-logs" {
			t.Errorf("log line about the restream without its module, id and name: %s", line)
		}
	}
	t.Logf("%d log lines about the restream", about)
	if about < 3 {
		t.Fatalf("%d log lines about the restream, want its start, state changes and stop:\n%s", about, out.String())
	}
}
