package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Scenario is one comparison: how to set up each arm for a run.
type Scenario struct {
	Name string
	Job  string // what the server does, for the report
	Ref  string // what the reference runs, for the report
	Tee  string // what the extra tee reference runs; empty when the scenario has none
	// Baseline makes the reference arm the same job on the gosrt-based sluice build
	// (Env.Baseline) instead of a reference process; without that build the arm does not run.
	Baseline bool
	// SelfRef makes the reference arm the same job on the same sluice build: the scenario
	// measures what one addition (a scraper) costs.
	SelfRef bool
	// Runs, when above Options.Runs, is how many runs this scenario gets: a small difference
	// needs more runs for its median to stand out of the machine's noise.
	Runs  int
	build func(ctx context.Context, env *Env, arm Arm, sl *Sluice) (*setup, error)
}

// Scenarios lists the comparisons in the order they run.
func Scenarios() []Scenario {
	return []Scenario{
		{Name: "player-srt", Job: "SRT listen input → HLS+DASH player", Ref: "ffmpeg -i srt://…?mode=listener -c copy -f hls (fMP4)",
			build: playerScenario(1, "srt")},
		{Name: "player-srt-scraped", Job: fmt.Sprintf("player-srt's job, its /metrics scraped every %v as Prometheus does", scrapeEvery),
			Ref: "the same player on the same build, not scraped", SelfRef: true, Runs: 5, build: scrapedScenario},
		{Name: "player-rtmp", Job: "RTMP listen input → HLS+DASH player", Ref: "ffmpeg -listen 1 -i rtmp://… -c copy -f hls (fMP4)",
			build: playerScenario(1, "rtmp")},
		{Name: "fanout-20", Job: "1 SRT publish to the SRT server module → 20 passthrough restreams, 10 to SRT and 10 to RTMP receivers",
			Ref: "20 × ffmpeg -i srt://…?mode=listener -c copy, 10 × -f mpegts srt://…, 10 × -f flv rtmp://…",
			Tee: "ffmpeg -i srt://…?mode=listener -c copy -f tee, 10 SRT and 10 RTMP slaves", build: fanoutScenario(20)},
		{Name: "fanout-100", Job: "1 SRT publish to the SRT server module → 100 passthrough restreams, 50 to SRT and 50 to RTMP receivers",
			Ref:   "100 × ffmpeg -i srt://…?mode=listener -c copy, 50 × -f mpegts srt://…, 50 × -f flv rtmp://…",
			build: fanoutScenario(100)}, // no tee: ffmpeg opens 100 slaves one by one, longer than the window
		{Name: "players-10", Job: "10 SRT listen inputs, each → its own HLS+DASH player", Ref: "10 × ffmpeg -i srt://… -c copy -f hls (fMP4)",
			build: playerScenario(10, "srt")},
		{Name: "record-mp4", Job: "SRT listen input → MP4 recording", Ref: "ffmpeg -i srt://…?mode=listener -c copy -f mp4",
			build: recordScenario},
		{Name: "srt-readers-50", Job: fmt.Sprintf("1 SRT publish to the SRT server module → %d SRT receivers calling it (receiver/bench/cam)", readersN),
			Ref: "the same, on the gosrt-based sluice build (-baseline-bin)", Baseline: true, build: readersScenario(readersN)},
		{Name: "srt-relay", Job: "1 SRT publish to the SRT server module → 1 SRT receiver calling it: the added latency",
			Ref: "srt-live-transmit srt://:IN?mode=listener&latency=200 srt://:OUT?mode=listener&latency=200", build: relayScenario},
	}
}

// refSRTListen is the ffmpeg input address of a reference SRT listener.
func refSRTListen(port int) string {
	return fmt.Sprintf("srt://127.0.0.1:%d?mode=listener&latency=%d", port, srtLatency.Microseconds())
}

// refHLS is the ffmpeg output of a reference HLS player: fMP4 segments of 2 s at the key frames.
func refHLS(dir string) []string {
	return []string{"-c", "copy", "-map", "0", "-bsf:a", "aac_adtstoasc", "-f", "hls", "-hls_time", "2", "-hls_list_size", "10",
		"-hls_segment_type", "fmp4", "-hls_flags", "delete_segments+temp_file", filepath.Join(dir, "index.m3u8")}
}

// listenInput is a sluice listen input on port.
func listenInput(kind string, port int) map[string]any {
	transport := "UDP"
	if kind == "INPUT_TYPE_RTMP_LISTEN" {
		transport = "TCP"
	}
	return map[string]any{"input_type": kind, "input_stream_listen_port": map[string]any{"port": port, "transport": transport}}
}

// refPids collects the pids of the reference processes and their children.
func refPids(procs []*Proc) func() []int {
	return func() []int {
		var live []int
		for _, p := range procs {
			if !p.Exited() {
				live = append(live, p.Pid())
			}
		}
		return withChildren(live...)
	}
}

// stopAll interrupts the reference processes, all at once, letting ffmpeg finish its files.
func stopAll(procs []*Proc) {
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Go(func() { p.Stop(syscall.SIGINT, 5*time.Second) })
	}
	wg.Wait()
}

// exitedEarly names a reference process that ended before the window did.
func exitedEarly(procs []*Proc) error {
	for _, p := range procs {
		if p.Exited() {
			return fmt.Errorf("%s ended during the run: %s", p.Name, tail(p.Output()))
		}
	}
	return nil
}

// sluiceStates checks that sluice's records of module with the given ids are running; it
// answers a note naming how many are not.
func sluiceStates(sl *Sluice, module string, ids []string) (string, error) {
	var recs []map[string]any
	if err := sl.Call("/api/"+module+"/getAll", map[string]any{}, &recs); err != nil {
		return "", err
	}
	state := map[string]map[string]any{}
	for _, r := range recs {
		if id, ok := r["id"].(string); ok {
			state[id] = r
		}
	}
	bad := 0
	var last string
	for _, id := range ids {
		if rec := state[id]; rec == nil || rec["state"] != "running" {
			bad++
			last = fmt.Sprintf("%v: %v", rec["state"], rec["last_error"])
		}
	}
	if bad > 0 {
		return fmt.Sprintf("%d of %d %s not running (%s)", bad, len(ids), module, last), nil
	}
	return "", nil
}
