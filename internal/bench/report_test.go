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
	checkMarkdown(t, rep.Markdown(),
		"over a 9s window", "Each arm runs 3 times",
		"half are SRT\nlisteners", "`OUTPUT_TYPE_OTHER_RTMP_URL`", "as many `ffmpeg -c copy`",
		"(1 run(s) of it;",
		"| fanout-100 | 1 SRT publish to the SRT server module → 100 passthrough restreams, 50 to SRT and 50 to RTMP receivers | `100 × ffmpeg",
		"; extra: `ffmpeg -i srt://…?mode=listener -c copy -f tee, 10 SRT and 10 RTMP slaves` |",
	)
	rep.TeeRuns = 0
	md := rep.Markdown()
	if strings.Contains(md, "extra:") || !strings.Contains(md, "was not run") {
		t.Errorf("without tee runs the report still names the tee reference")
	}
}

// TestReportSRT: the method defines RSS per reader and the relay's latency, the profile is
// named after the scenario profiled, and the micro-benchmarks' check follows the others.
func TestReportSRT(t *testing.T) {
	o := srtOutcome(true)
	o.Profile = "flat flat% sum% cum cum%"
	o.ProfileOf = Scenario{Name: "srt-readers-50", Job: "fifty readers"}
	rep := Report{Window: 9 * time.Second, Runs: 3, Outcome: o,
		Micro: "pkg: github.com/sluicemedia/sluice/protocols/srt/link\nBenchmarkReceivePath-2 10 1 ns/op 0 B/op 0 allocs/op\nBenchmarkSendPath-2 10 1 ns/op 0 B/op 0 allocs/op\n"}
	checkMarkdown(t, rep.Markdown(),
		"**RSS per\nreader** = (peak RSS over the window with the readers − peak RSS over the 4s with the publisher alone",
		"less 2 × 200 ms; payloads the pacer wrote before the receiver was connected are left out",
		"## CPU profile of sluice, srt-readers-50 (fifty readers)",
		"- No allocation per packet on the SRT link's receive and send paths: **yes**",
		"- 50 SRT readers of one stream through the SRT server module use at most 0.300× the CPU",
	)
}

// checkMarkdown checks that the report md holds each of wants and that no formatting verb went
// wrong in it.
func checkMarkdown(t *testing.T, md string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(md, "%!") {
		t.Errorf("a formatting verb went wrong: %s", md)
	}
}
