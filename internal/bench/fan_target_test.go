package bench

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestFanTargets: SRT and RTMP alternate, so that an even count is half of each; each target is
// addressed the same way by sluice's restream and by ffmpeg.
func TestFanTargets(t *testing.T) {
	kinds := map[string]int{}
	for i := range 100 {
		kinds[receiverKind(i)]++
	}
	if kinds[recvSRT] != 50 || kinds[recvRTMP] != 50 {
		t.Fatalf("kinds of 100 receivers: %v", kinds)
	}

	srt := fanTarget{kind: recvSRT, port: 4000}
	rtmp := fanTarget{kind: recvRTMP, port: 4001, key: rtmpKey(1)}
	if got := srt.sluiceOutput(); got["output_type"] != "OUTPUT_TYPE_SRT_URL" || got["output_stream_url"] != "srt://127.0.0.1:4000" {
		t.Fatalf("sluice SRT output %v", got)
	}
	got := rtmp.sluiceOutput()
	if got["output_type"] != "OUTPUT_TYPE_OTHER_RTMP_URL" || got["output_stream_url"] != "rtmp://127.0.0.1:4001/live" || got["output_stream_key"] != "fan-1" {
		t.Fatalf("sluice RTMP output %v", got)
	}

	want := []string{"-i", "srt://127.0.0.1:5000?mode=listener&latency=200000", "-c", "copy", "-map", "0",
		"-f", "mpegts", "srt://127.0.0.1:4000?latency=200000"}
	if args := refRestreamArgs(5000, srt); !slices.Equal(args, want) {
		t.Fatalf("ffmpeg SRT restream %q, want %q", args, want)
	}
	want = []string{"-i", "srt://127.0.0.1:5001?mode=listener&latency=200000", "-c", "copy", "-map", "0",
		"-f", "flv", "rtmp://127.0.0.1:4001/live/fan-1"}
	if args := refRestreamArgs(5001, rtmp); !slices.Equal(args, want) {
		t.Fatalf("ffmpeg RTMP restream %q, want %q", args, want)
	}

	tee := refTeeArgs(5002, []fanTarget{srt, rtmp})
	if tee[len(tee)-2] != "tee" || !slices.Contains(tee, "-tag:v") {
		t.Fatalf("tee args %q", tee)
	}
	slaves := strings.Split(tee[len(tee)-1], "|")
	if len(slaves) != 2 || slaves[0] != "[f=mpegts:onfail=ignore]srt://127.0.0.1:4000?latency=200000" ||
		slaves[1] != "[f=flv:onfail=ignore:bsfs/a=aac_adtstoasc]rtmp://127.0.0.1:4001/live/fan-1" {
		t.Fatalf("tee slaves %q", slaves)
	}
}

// TestArms: the tee reference runs only for scenarios that have one, in the first teeRuns runs;
// the gosrt build is the reference of the scenarios that name it, when given.
func TestArms(t *testing.T) {
	fan := Scenario{Name: "fanout-20", Tee: "ffmpeg -f tee"}
	if got := arms(fan, 0, 1, false); !slices.Equal(got, []Arm{ArmSluice, ArmRef, ArmTee}) {
		t.Fatalf("first run of a fan-out: %v", got)
	}
	if got := arms(fan, 1, 1, false); !slices.Equal(got, []Arm{ArmSluice, ArmRef}) {
		t.Fatalf("second run with one tee run: %v", got)
	}
	if got := arms(Scenario{Name: "player-srt"}, 0, 3, false); !slices.Equal(got, []Arm{ArmSluice, ArmRef}) {
		t.Fatalf("a player: %v", got)
	}
	readers := Scenario{Name: "srt-readers-50", Baseline: true}
	if got := arms(readers, 0, 1, false); !slices.Equal(got, []Arm{ArmSluice}) {
		t.Fatalf("readers without the gosrt build: %v", got)
	}
	if got := arms(readers, 0, 1, true); !slices.Equal(got, []Arm{ArmSluice, ArmRef}) {
		t.Fatalf("readers with the gosrt build: %v", got)
	}
	env := &Env{Sluice: "new", Baseline: "old"}
	if armBinary(env, readers, ArmSluice) != "new" || armBinary(env, readers, ArmRef) != "old" ||
		armBinary(env, Scenario{Name: "player-srt"}, ArmRef) != "" {
		t.Fatal("arm binaries: the gosrt build runs only as the reference of a Baseline scenario")
	}
}

// TestFanoutRows: a fan-out's rows hold the worst run's losses of each arm, and the tee
// reference's rows follow when it ran.
func TestFanoutRows(t *testing.T) {
	run := func(cpu float64, short, cc int) RunResult {
		return RunResult{Usage: Usage{CPU: durationOf(cpu), Wall: durationOf(100)}, FramesSent: 270, FramesShort: short,
			FramesShortRTMP: short / 2, CCErrors: cc}
	}
	o := &Outcome{
		Scenarios: []Scenario{{Name: "fanout-20", Tee: "tee"}},
		Runs: map[string]map[Arm][]RunResult{"fanout-20": {
			ArmSluice: {run(10, 0, 0), run(12, 0, 1), run(11, 0, 0)},
			ArmRef:    {run(40, 5, 2), run(30, 9, 0), run(50, 1, 0)},
			ArmTee:    {run(20, 700, 300)},
		}},
	}
	rows := o.Rows()
	get := func(metric string) Row {
		for _, r := range rows {
			if r.Metric == metric {
				return r
			}
		}
		t.Fatalf("no row %q in %+v", metric, rows)
		return Row{}
	}
	if r := get("CPU"); r.Sluice != 11 || r.Ref != 40 {
		t.Fatalf("CPU row %+v", r)
	}
	if r := get("frames not received, worst run"); r.Sluice != 0 || r.Ref != 9 ||
		r.Note != "of 270 frames sent a run to each receiver; at RTMP receivers, worst run: sluice 0, ref 4.00" {
		t.Fatalf("frames row %+v", r)
	}
	if r := get("continuity errors, worst run"); r.Sluice != 1 || r.Ref != 2 {
		t.Fatalf("continuity row %+v", r)
	}
	if r := get("CPU, reference: one ffmpeg tee"); r.Sluice != 11 || r.Ref != 20 || r.Note != "tee: 1 run(s)" {
		t.Fatalf("tee CPU row %+v", r)
	}
	if r := get("frames not received, worst run, reference: one ffmpeg tee"); r.Ref != 700 {
		t.Fatalf("tee frames row %+v", r)
	}
	delete(o.Runs["fanout-20"], ArmTee)
	for _, r := range o.Rows() {
		if strings.Contains(r.Metric, "tee") {
			t.Fatalf("a tee row without tee runs: %+v", r)
		}
	}
	if math.IsNaN(get("peak RSS").Sluice) {
		t.Fatal("peak RSS row is NaN")
	}
}

// durationOf is s seconds.
func durationOf(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
