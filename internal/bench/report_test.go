package bench

import (
	"strings"
	"testing"
	"time"
)

// TestReportMethod: the method describes the fan-out references, and the scenario table names
// the tee reference only when it ran.
func TestReportMethod(t *testing.T) {
	var fan []Scenario
	for _, sc := range Scenarios() {
		if strings.HasPrefix(sc.Name, "fanout") {
			fan = append(fan, sc)
		}
	}
	rep := Report{Window: 9 * time.Second, Runs: 3, TeeRuns: 1, Outcome: &Outcome{Scenarios: fan, Runs: map[string]map[Arm][]RunResult{}}}
	md := rep.Markdown()
	for _, want := range []string{
		"over a 9s window", "Each arm runs 3 times",
		"half are SRT\nlisteners", "`OUTPUT_TYPE_OTHER_RTMP_URL`", "as many `ffmpeg -c copy`",
		"(1 run(s) of it;",
		"| fanout-100 | 1 SRT publish to the SRT server module → 100 passthrough restreams, 50 to SRT and 50 to RTMP receivers | `100 × ffmpeg",
		"; extra: `ffmpeg -i srt://…?mode=listener -c copy -f tee, 10 SRT and 10 RTMP slaves` |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(md, "%!") {
		t.Errorf("a formatting verb went wrong: %s", md)
	}
	rep.TeeRuns = 0
	md = rep.Markdown()
	if strings.Contains(md, "extra:") || !strings.Contains(md, "was not run") {
		t.Errorf("without tee runs the report still names the tee reference")
	}
}
