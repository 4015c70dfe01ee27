package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil/browser"
)

// LatencyScenario is the name of the glass-to-glass comparison (-only latency). It runs apart
// from the arm-against-reference scenarios: its reference is a third player, not a second arm.
const LatencyScenario = "latency"

// latencyPartMS is the low-latency player's part duration (part_duration_ms, its default);
// latencyShortPartMS the second low-latency arm's, at the short end of Apple's advice
// (200–500 ms). PART-HOLD-BACK is 3 part durations, and most of a low-latency player's
// latency: 1 s and 0.75 s behind the edge.
const (
	latencyPartMS      = 333
	latencyShortPartMS = 250
)

// LatencyArm is one player of the latency comparison.
type LatencyArm struct {
	Name  string   // "classic", "low-latency", "ffmpeg -hls_time 1"
	Setup string   // what it is, for the report
	Kinds []string // what Chromium plays: "hls", "dash"
	// player is the sluice player record's fields beyond the input; nil for the ffmpeg reference.
	player map[string]any
	low    bool // play with hls.js lowLatencyMode and dash.js live catch-up
}

// LatencyArms lists the players in the order they run.
func LatencyArms() []LatencyArm {
	// The recommended settings (README, the console's defaults) with the 2 s fragments of the issue.
	classic := map[string]any{
		"initial_live_manifest_size": 3, "live_sync_duration_count": 4,
		"hls_fragment_size": 2, "hls_fragment_length": 60, "dash_fragment_size": 2, "dash_fragment_length": 60,
	}
	ll := map[string]any{"low_latency": true, "part_duration_ms": latencyPartMS}
	short := map[string]any{"low_latency": true, "part_duration_ms": latencyShortPartMS}
	for k, v := range classic {
		ll[k], short[k] = v, v
	}
	return []LatencyArm{
		{Name: "classic", Setup: "sluice player, recommended settings with 2 s fragments (initial_live_manifest_size 3, live_sync_duration_count 4, fragment length 60 s)",
			Kinds: []string{"hls", "dash"}, player: classic},
		{Name: "low-latency", Setup: fmt.Sprintf("the same player with low_latency: true, part_duration_ms %d; hls.js lowLatencyMode, dash.js live catch-up", latencyPartMS),
			Kinds: []string{"hls", "dash"}, player: ll, low: true},
		{Name: "low-latency, 250 ms parts", Setup: fmt.Sprintf("the same with part_duration_ms %d", latencyShortPartMS),
			Kinds: []string{"hls", "dash"}, player: short, low: true},
		{Name: "ffmpeg -hls_time 1", Setup: "reference: `ffmpeg -i srt://…?mode=listener -c copy -f hls -hls_time 1 -hls_list_size 6 -hls_segment_type fmp4`, served by a Go file server",
			Kinds: []string{"hls"}},
	}
}

// LatencyResult is one playback of one arm.
type LatencyResult struct {
	Arm       string
	Kind      string // hls or dash
	Player    string // e.g. "hls.js 1.7.4"
	Latencies []time.Duration
	Undecoded int // reads whose frame had no valid stamp
	Stalls    int // waiting events after playback began
	Played    float64
	Err       string // why the playback has no figures, or what went wrong in it
}

// Quantile is the q-quantile (0..1) of the latencies, nearest rank; 0 when there are none.
func (r LatencyResult) Quantile(q float64) time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	s := slices.Clone(r.Latencies)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// LatencyOutcome is the whole latency comparison.
type LatencyOutcome struct {
	Window  time.Duration
	Arms    []LatencyArm
	Results []LatencyResult
	CPU     map[string]Usage // sluice's usage per sluice arm, over its playbacks
	Errors  []string
}

// RunLatency runs every arm once: a fresh sluice (or the ffmpeg reference) fed by the stamp
// publisher over SRT, played by headless Chromium for window per kind, one after the other.
func RunLatency(ctx context.Context, env *Env, window time.Duration) *LatencyOutcome {
	out := &LatencyOutcome{Window: window, Arms: LatencyArms(), CPU: map[string]Usage{}}
	for _, arm := range out.Arms {
		if ctx.Err() != nil {
			break
		}
		t := time.Now()
		res, usage, err := runLatencyArm(ctx, env, arm, window)
		if err != nil {
			env.Log.Error("latency run failed", "arm", arm.Name, "err", err)
			out.Errors = append(out.Errors, fmt.Sprintf("latency %s: %v", arm.Name, err))
		}
		if arm.player != nil && err == nil {
			out.CPU[arm.Name] = usage
		}
		for _, r := range res {
			env.Log.Info("latency", "arm", arm.Name, "kind", r.Kind, "p50", r.Quantile(0.5), "p95", r.Quantile(0.95),
				"samples", len(r.Latencies), "stalls", r.Stalls, "undecoded", r.Undecoded, "err", r.Err, "took", time.Since(t).Round(time.Second))
		}
		out.Results = append(out.Results, res...)
	}
	return out
}

// runLatencyArm sets up one arm, publishes, and plays each of its kinds for window.
func runLatencyArm(ctx context.Context, env *Env, arm LatencyArm, window time.Duration) ([]LatencyResult, Usage, error) {
	in, err := freePort()
	if err != nil {
		return nil, Usage{}, err
	}
	var urls map[string]string
	var pids func() []int
	if arm.player != nil {
		sl, err := StartSluice(ctx, env.Sluice, false)
		if err != nil {
			return nil, Usage{}, err
		}
		defer sl.Stop()
		if urls, err = latencyPlayer(sl, arm, in); err != nil {
			return nil, Usage{}, err
		}
		pids = func() []int { return withChildren(sl.Pid()) }
	} else {
		dir, err := os.MkdirTemp(env.WorkDir, "latency-hls-")
		if err != nil {
			return nil, Usage{}, fmt.Errorf("reference folder: %w", err)
		}
		ref, err := ffmpeg("reference hls -hls_time 1", "-i", refSRTListen(in), "-c", "copy", "-map", "0", "-bsf:a", "aac_adtstoasc",
			"-f", "hls", "-hls_time", "1", "-hls_list_size", "6", "-hls_segment_type", "fmp4",
			"-hls_flags", "delete_segments+temp_file", filepath.Join(dir, "index.m3u8"))
		if err != nil {
			return nil, Usage{}, err
		}
		defer ref.Stop(syscall.SIGINT, 5*time.Second)
		srv, addr, err := serveFolder(dir)
		if err != nil {
			return nil, Usage{}, err
		}
		defer srv.Close()
		urls = map[string]string{"hls": "http://" + addr + "/index.m3u8"}
		pids = func() []int { return withChildren(ref.Pid()) }
	}
	wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	err = waitListening(wctx, "udp", in)
	cancel()
	if err != nil {
		return nil, Usage{}, err
	}
	pub, err := ffmpeg("stamp publisher", stampPublisherArgs("-f", "mpegts",
		fmt.Sprintf("srt://127.0.0.1:%d?mode=caller&latency=%d&streamid=bench&pkt_size=1316", in, srtLatency.Microseconds()))...)
	if err != nil {
		return nil, Usage{}, err
	}
	defer pub.Stop(syscall.SIGINT, 5*time.Second)
	if err := waitSegments(ctx, urls["hls"], 2, 30*time.Second, pub); err != nil {
		return nil, Usage{}, err
	}

	mctx, stop := context.WithCancel(ctx)
	usage := make(chan Usage, 1)
	go func() { usage <- Measure(mctx, pids, 24*time.Hour) }()
	var res []LatencyResult
	for _, kind := range arm.Kinds {
		res = append(res, playLatency(arm, kind, urls[kind], window))
		if pub.Exited() {
			stop()
			<-usage
			return res, Usage{}, fmt.Errorf("the stamp publisher ended: %s", tail(pub.Output()))
		}
	}
	stop()
	return res, <-usage, nil
}

// latencyPlayer creates arm's player fed by an SRT listen input on port in, and returns its
// HLS and DASH addresses.
func latencyPlayer(sl *Sluice, arm LatencyArm, in int) (map[string]string, error) {
	vod, err := freePort()
	if err != nil {
		return nil, err
	}
	body := map[string]any{"vod_name": "latency-" + arm.Name, "vod_port": vod, "input": listenInput("INPUT_TYPE_SRT_LISTEN", in)}
	for k, v := range arm.player {
		body[k] = v
	}
	id, err := sl.Create("vod", body)
	if err != nil {
		return nil, err
	}
	rec, err := sl.Record("vod", id)
	if err != nil {
		return nil, err
	}
	hls, _ := rec["hls_url"].(string)
	dash, _ := rec["dash_url"].(string)
	if hls == "" || dash == "" {
		return nil, fmt.Errorf("player %s: record without hls_url or dash_url: %v", id, rec)
	}
	return map[string]string{"hls": hls, "dash": dash}, nil
}

// playLatency plays url in Chromium for window and reads the stamps.
func playLatency(arm LatencyArm, kind, url string, window time.Duration) LatencyResult {
	r := LatencyResult{Arm: arm.Name, Kind: kind}
	opts := []browser.Option{browser.Stamp()}
	if arm.low {
		opts = append(opts, browser.LowLatency())
	}
	p, err := browser.Watch(kind, url, window, opts...)
	r.Player, r.Played = p.Player, p.PlayedSeconds
	if err != nil {
		r.Err = err.Error()
		return r
	}
	if !p.OK {
		r.Err = p.Reason
		if len(p.Errors) > 0 {
			r.Err += ": " + strings.Join(p.Errors, "; ")
		}
	}
	if p.Stamp == nil {
		if r.Err == "" {
			r.Err = "the page read no stamps"
		}
		return r
	}
	for _, s := range p.Stamp.Samples {
		r.Latencies = append(r.Latencies, time.Duration(s[1])*time.Millisecond)
	}
	r.Undecoded = p.Stamp.Undecoded
	r.Stalls = len(p.Stamp.Stalls)
	if len(r.Latencies) == 0 && r.Err == "" {
		r.Err = fmt.Sprintf("no frame carried a readable stamp (%d reads)", p.Stamp.Undecoded)
	}
	return r
}

// waitSegments waits until the HLS playlist at url lists n segments, so that a player starts on
// a running stream.
func waitSegments(ctx context.Context, url string, n int, limit time.Duration, pub *Proc) error {
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(limit)
	var last string
	for {
		resp, err := client.Get(url)
		if err == nil {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.Count(string(b), "#EXTINF") >= n {
				return nil
			}
			last = fmt.Sprintf("status %d, %d segments", resp.StatusCode, strings.Count(string(b), "#EXTINF"))
		} else {
			last = err.Error()
		}
		if pub.Exited() {
			return fmt.Errorf("the stamp publisher ended: %s", tail(pub.Output()))
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s: fewer than %d segments after %v (%s)", url, n, limit, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// serveFolder serves dir's files over HTTP on a loopback port, as a plain web server would serve
// ffmpeg's HLS output: any origin may read them, and nothing is cached.
func serveFolder(dir string) (*http.Server, string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", fmt.Errorf("reference file server: %w", err)
	}
	files := http.FileServer(http.Dir(dir))
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Access-Control-Allow-Origin", "*")
			w.Header().Set("Cache-Control", "no-store")
			files.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second, IdleTimeout: 30 * time.Second,
	}
	// Serve ends with Close; a failure before that shows as the playback's.
	go func() { _ = srv.Serve(l) }()
	return srv, l.Addr().String(), nil
}
