package bench

import (
	"math"
	"strings"
	"testing"
)

func TestTable(t *testing.T) {
	rows := []Row{
		{Scenario: "player-srt", Metric: "CPU", Unit: "% of a core", Sluice: 6.4, Ref: 8},
		{Scenario: "player-srt", Metric: "peak RSS", Unit: "MiB", Sluice: 38.6, Ref: 0},
		{Scenario: "record-mp4", Metric: "CPU", Sluice: math.NaN(), Ref: 3.83, Note: "recorder not built"},
		{Scenario: "fanout-100", Metric: "frames lost", Sluice: 0, Ref: 1234},
	}
	got := Table(rows)
	want := []string{
		"| scenario | metric | sluice | reference | sluice / ref | note |",
		"|---|---|---:|---:|---:|---|",
		"| player-srt | CPU (% of a core) | 6.40 | 8.00 | 0.800 |  |",
		"| player-srt | peak RSS (MiB) | 38.6 | 0 | n/a |  |",
		"| record-mp4 | CPU | n/a | 3.83 | n/a | recorder not built |",
		"| fanout-100 | frames lost | 0 | 1234 | 0 |  |",
	}
	if got != strings.Join(want, "\n")+"\n" {
		t.Fatalf("table:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

func TestChecks(t *testing.T) {
	rows := []Row{
		{Scenario: "player-rtmp", Metric: "CPU", Sluice: 1.3, Ref: 1.6},
		{Scenario: "player-srt", Metric: "CPU", Sluice: 5, Ref: 4},
		{Scenario: "fanout-100", Metric: "frames not received, worst run", Sluice: 0, Ref: 1300},
		{Scenario: "fanout-100", Metric: "continuity errors, worst run", Sluice: 4, Ref: 900},
	}
	got := Checks(rows)
	if len(got) != 3 || !strings.Contains(got[0], "**yes**") || !strings.Contains(got[1], "ratio 1.25") || !strings.Contains(got[2], "**no**") {
		t.Fatalf("checks %q", got)
	}
	rows[0].Sluice = math.NaN()
	if got := Checks(rows[:1]); !strings.Contains(got[0], "**no**") {
		t.Fatalf("a missing figure passed: %q", got)
	}
	fan := Checks([]Row{
		{Scenario: "fanout-20", Metric: "CPU", Sluice: 20, Ref: 40},
		{Scenario: "fanout-20", Metric: "peak RSS", Sluice: 50, Ref: 500},
	})
	want := "20 passthrough restreams (half SRT, half RTMP) against as many `ffmpeg -c copy`: CPU ratio 0.500 (sluice 20.0%, ffmpeg 40.0% of a core), RSS ratio 0.100 (sluice 50.0 MiB, ffmpeg 500 MiB)."
	if len(fan) != 1 || fan[0] != want {
		t.Fatalf("fan-out check %q, want %q", fan, want)
	}
}
