package bench

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Arm is one side of a comparison.
type Arm int

// The arms: sluice, ffmpeg doing the same job, and for the fan-outs one ffmpeg with a tee muxer.
const (
	ArmSluice Arm = iota
	ArmRef
	ArmTee
)

// String names the arm.
func (a Arm) String() string {
	switch a {
	case ArmSluice:
		return "sluice"
	case ArmTee:
		return "tee"
	}
	return "reference"
}

// Env is what every run needs.
type Env struct {
	Clip   *Clip
	Sluice string // path of the sluice binary
	// Baseline is the path of the gosrt-based sluice build, the reference of the scenarios
	// marked Baseline; empty when it is not measured.
	Baseline string
	Window   time.Duration // measurement window of one run
	WorkDir  string        // scratch folder for the references' files
	Poll     time.Duration // playlist polling interval
	Log      *slog.Logger
}

// publish is one publisher of a run and what it feeds.
type publish struct {
	srtAddrs  []string               // SRT: paced by the bench, one schedule for all
	streamID  string                 //
	rtmpURL   string                 // RTMP: ffmpeg -re -c copy
	waitProto string                 // "tcp" or "udp": the listener to wait for
	waitPorts []int                  //
	playlist  func() (string, error) // the HLS media playlist fed, nil when none
}

// setup is an arm made ready for a run by a scenario.
type setup struct {
	pids  func() []int // the processes doing the server's job
	pubs  []publish    //
	sinks []receiver   // receivers, when the scenario has any
	// join runs once the publishers started, before the window: what must happen between
	// (receivers that call in, a measure without them); sents are the publishers' records.
	join    func(ctx context.Context, sents []*Sent, res *RunResult) error
	check   func() (string, error)              // at the end of the window, before the publishers stop: a note
	collect func(sents []*Sent, res *RunResult) // once the publishers stopped and the receivers settled
	after   func() (string, error)              // once the publishers stopped: a note
	cleanup func()
}

// RunResult is what one run of one arm measured.
type RunResult struct {
	Usage           Usage
	FirstPlaylist   []float64 // seconds from publish start to the first playlist, one per player
	Delays          []float64 // milliseconds from a segment's last frame sent to its listing
	FramesSent      int       // frames the publisher sent completely
	FramesShort     int       // frames sent but not received, summed over the receivers
	FramesShortRTMP int       // the part of FramesShort at RTMP receivers
	FramesShortEnd  int       // the part of FramesShort after a receiver's last frame (placed in the clip)
	CCErrors        int       // continuity errors at the receivers
	DropWarnings    int       // sluice log lines about dropped units or evicted readers
	ReceiverDrops   int64     // units the bench's own RTMP readers dropped: a fault of the bench
	Readers         int       // receivers that joined during the run (srt-readers)
	AloneRSS        int64     // peak RSS of the server before they joined, the publisher alone, bytes
	Latencies       []float64 // milliseconds each payload took beyond the configured latency (srt-relay)
	PacketsLost     int       // TS packets of the clip missing at a stamping receiver
	Unplaced        int       // TS packets a stamping receiver could not place in the clip
	ScrapeCPU       []float64 // milliseconds of CPU each /metrics scrape cost the server (player-srt-scraped)
	Note            string
}

// armBinary is the sluice binary an arm runs: this build for sluice's arm and for the
// reference of a SelfRef scenario, the gosrt-based build for the reference of a Baseline
// scenario, none for a reference process.
func armBinary(env *Env, sc Scenario, arm Arm) string {
	switch {
	case arm == ArmSluice:
		return env.Sluice
	case arm == ArmRef && sc.Baseline:
		return env.Baseline
	case arm == ArmRef && sc.SelfRef:
		return env.Sluice
	}
	return ""
}

// steadyWait is the longest a run waits for its players' first segments before it measures.
const steadyWait = 30 * time.Second

// runOnce runs one arm of sc once; profile, when set, runs beside the window with the sluice.
func runOnce(ctx context.Context, env *Env, sc Scenario, arm Arm, profile func(*Sluice)) (RunResult, error) {
	var res RunResult
	var sl *Sluice
	if bin := armBinary(env, sc, arm); bin != "" {
		var err error
		if sl, err = StartSluice(ctx, bin, profile != nil); err != nil {
			return res, err
		}
		defer sl.Stop()
	}
	st, err := sc.build(ctx, env, arm, sl)
	if err != nil {
		return res, fmt.Errorf("%s %s: set up: %w", sc.Name, arm, err)
	}
	defer st.cleanup()
	waitCtx, cancelWait := context.WithTimeout(ctx, 20*time.Second)
	defer cancelWait()
	for _, p := range st.pubs {
		for _, port := range p.waitPorts {
			if err := waitListening(waitCtx, p.waitProto, port); err != nil {
				return res, fmt.Errorf("%s %s: %w", sc.Name, arm, err)
			}
		}
	}

	pubCtx, stopPubs := context.WithCancel(ctx)
	defer stopPubs()
	var wg sync.WaitGroup
	var pubErrMu sync.Mutex
	var pubErr error
	sents := make([]*Sent, len(st.pubs))
	listings := make([]*Listing, len(st.pubs))
	start := time.Now()
	for i, p := range st.pubs {
		if p.rtmpURL != "" {
			proc, err := ffmpeg("rtmp publisher", "-re", "-i", env.Clip.Path, "-c", "copy", "-map", "0", "-f", "flv", p.rtmpURL)
			if err != nil {
				return res, err
			}
			defer proc.Stop(syscall.SIGKILL, time.Second)
			go func() { <-pubCtx.Done(); proc.Stop(syscall.SIGKILL, time.Second) }()
		} else {
			sents[i] = newSent(env.Clip)
			wg.Go(func() {
				if err := publishSRT(pubCtx, p.srtAddrs, p.streamID, env.Clip, sents[i]); err != nil {
					pubErrMu.Lock()
					pubErr = err
					pubErrMu.Unlock()
				}
			})
		}
		if p.playlist != nil {
			listings[i] = newListing()
			wg.Go(func() { watchPlaylist(pubCtx, listings[i], p.playlist, env.Poll) })
		}
	}
	if st.join != nil {
		if err := st.join(ctx, sents, &res); err != nil {
			stopPubs()
			wg.Wait()
			return res, fmt.Errorf("%s %s: %w", sc.Name, arm, err)
		}
	}
	if profile != nil {
		wg.Go(func() { profile(sl) })
	}
	// Players are measured in their steady state: from the moment every one has listed its
	// first segment. Before it, ffmpeg probes its input for about 5 s, buffering and writing
	// nothing, while sluice starts segmenting at the first key frame: a window from the
	// publisher's start put more of sluice's segmenting in it than of ffmpeg's.
	steady, endSteady := context.WithTimeout(ctx, steadyWait)
	for _, l := range listings {
		if l == nil {
			continue
		}
		select {
		case <-l.Listed:
		case <-steady.Done():
		}
	}
	endSteady()
	res.Usage = Measure(ctx, st.pids, env.Window)
	var notes []string
	if st.check != nil {
		note, err := st.check()
		if err != nil {
			stopPubs()
			wg.Wait()
			return res, fmt.Errorf("%s %s: %w", sc.Name, arm, err)
		}
		notes = append(notes, note)
	}
	stopPubs()
	wg.Wait()
	if pubErr != nil {
		return res, fmt.Errorf("%s %s: %w", sc.Name, arm, pubErr)
	}
	if len(st.sinks) > 0 {
		time.Sleep(time.Second) // let the last units reach the receivers
	}

	for i, l := range listings {
		if l == nil {
			continue
		}
		if !l.First.IsZero() {
			res.FirstPlaylist = append(res.FirstPlaylist, l.First.Sub(start).Seconds())
		}
		if sents[i] != nil {
			res.Delays = append(res.Delays, l.Delays(sents[i])...)
		}
	}
	for _, s := range sents {
		if s != nil {
			res.FramesSent = max(res.FramesSent, s.FramesSent())
		}
	}
	for _, k := range st.sinks {
		c := k.Received()
		// The frame being sent when the publisher stopped is never complete at the server.
		short := max(0, res.FramesSent-1-c.Joined-c.Frames)
		res.FramesShort += short
		if c.Placed {
			res.FramesShortEnd += min(short, max(0, res.FramesSent-2-c.LastFrame))
		}
		if k.Kind() == recvRTMP {
			res.FramesShortRTMP += short
		}
		res.CCErrors += c.CCErrors
		res.ReceiverDrops += c.Dropped
		if c.CCErrors > 0 {
			env.Log.Debug("receiver continuity errors", "receiver", k.Label(), "errors", c.CCErrors, "first", c.FirstErr)
		}
		if c.Frames < res.FramesSent-1-c.Joined {
			env.Log.Debug("receiver short", "receiver", k.Label(), "frames", c.Frames, "sent", res.FramesSent,
				"first_pts", c.FirstPTS, "last_pts", c.LastPTS, "span_s", ticks90k(c.LastPTS-c.FirstPTS).Seconds())
		}
	}
	if st.collect != nil {
		st.collect(sents, &res)
	}
	if sl != nil {
		res.DropWarnings = sl.DropWarnings()
	}
	if st.after != nil {
		note, err := st.after()
		if err != nil {
			return res, fmt.Errorf("%s %s: %w", sc.Name, arm, err)
		}
		notes = append(notes, note)
	}
	res.Note = strings.TrimSpace(strings.Join(notes, " "))
	return res, nil
}
