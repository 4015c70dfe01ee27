package bench

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
)

// fanoutScenario feeds one SRT publish to n receivers in the bench, half SRT and half RTMP:
// sluice runs n passthrough restreams from its SRT server module; the reference runs n
// `ffmpeg -c copy` processes, one restream each with its own SRT listener, all fed by the one
// pacer; the tee arm runs one ffmpeg whose tee muxer feeds every receiver.
func fanoutScenario(n int) func(context.Context, *Env, Arm, *Sluice) (*setup, error) {
	return func(ctx context.Context, env *Env, arm Arm, sl *Sluice) (*setup, error) {
		st := &setup{}
		st.cleanup = func() { closeAll(st.sinks) }
		targets, err := startReceivers(st, n, receiverLog(env.Log))
		if err != nil {
			st.cleanup()
			return nil, err
		}
		var fail error
		switch arm {
		case ArmSluice:
			fail = fanoutSluice(st, sl, targets)
		case ArmRef:
			fail = fanoutProcesses(st, targets, env.Log)
		default:
			fail = fanoutTee(st, targets, env.Log)
		}
		if fail != nil {
			st.cleanup()
			return nil, fail
		}
		return st, nil
	}
}

// startReceivers starts n receivers into st.sinks and answers where each listens.
func startReceivers(st *setup, n int, log *slog.Logger) ([]fanTarget, error) {
	targets := make([]fanTarget, 0, n)
	for i := range n {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		t := fanTarget{kind: receiverKind(i), port: port}
		var k receiver
		if t.kind == recvRTMP {
			t.key = rtmpKey(i)
			k, err = listenRTMP(port, t.key, log)
		} else {
			k, err = listenSRT(port)
		}
		if err != nil {
			return nil, err
		}
		st.sinks = append(st.sinks, k)
		targets = append(targets, t)
	}
	return targets, nil
}

// fanoutSluice publishes to sluice's SRT server module and creates one restream per target.
func fanoutSluice(st *setup, sl *Sluice, targets []fanTarget) error {
	in, err := freePort()
	if err != nil {
		return err
	}
	pub := publish{srtAddrs: []string{fmt.Sprintf("127.0.0.1:%d", in)}, streamID: "publisher/bench/cam", waitProto: "udp", waitPorts: []int{in}}
	st.pubs = []publish{pub}
	server, err := sl.Create("srt-servers", map[string]any{"server_name": "bench", "server_port": in})
	if err != nil {
		return err
	}
	ids := make([]string, 0, len(targets))
	for i, t := range targets {
		id, err := sl.Create("restream", map[string]any{
			"restream_name": fmt.Sprintf("fan-%d", i),
			"input": map[string]any{"input_type": "INPUT_TYPE_SRT_SOFTWARE", "input_server_id": server,
				"input_stream_id": pub.streamID},
			"output": t.sluiceOutput(),
		})
		if err != nil {
			return err
		}
		ids = append(ids, id)
	}
	st.pids = func() []int { return withChildren(sl.Pid()) }
	st.check = func() (string, error) { return sluiceStates(sl, "restream", ids) }
	return nil
}

// fanoutProcesses starts one `ffmpeg -c copy` per target, each listening for SRT on its own
// port; the pacer feeds them all.
func fanoutProcesses(st *setup, targets []fanTarget, log *slog.Logger) error {
	pub := publish{streamID: "bench", waitProto: "udp"}
	var procs []*Proc
	// Set first, so that a failure half-way stops the processes already started.
	st.cleanup = func() { stopAll(procs); logOutputs(log, procs); closeAll(st.sinks) }
	for i, t := range targets {
		in, err := freePort()
		if err != nil {
			return err
		}
		p, err := ffmpeg(fmt.Sprintf("reference restream %d", i), refRestreamArgs(in, t)...)
		if err != nil {
			return err
		}
		procs = append(procs, p)
		pub.srtAddrs = append(pub.srtAddrs, fmt.Sprintf("127.0.0.1:%d", in))
		pub.waitPorts = append(pub.waitPorts, in)
	}
	st.pubs = []publish{pub}
	st.pids = refPids(procs)
	st.check = func() (string, error) { return "", exitedEarly(procs) }
	return nil
}

// fanoutTee starts one ffmpeg whose tee muxer writes every target.
func fanoutTee(st *setup, targets []fanTarget, log *slog.Logger) error {
	in, err := freePort()
	if err != nil {
		return err
	}
	st.pubs = []publish{{srtAddrs: []string{fmt.Sprintf("127.0.0.1:%d", in)}, streamID: "bench", waitProto: "udp", waitPorts: []int{in}}}
	p, err := ffmpeg("reference tee", refTeeArgs(in, targets)...)
	if err != nil {
		return err
	}
	procs := []*Proc{p}
	st.pids = refPids(procs)
	st.check = func() (string, error) { return "", exitedEarly(procs) }
	st.cleanup = func() { stopAll(procs); logOutputs(log, procs); closeAll(st.sinks) }
	return nil
}

// logOutputs logs, as details, what the reference processes printed (their errors).
func logOutputs(log *slog.Logger, procs []*Proc) {
	for _, p := range procs {
		if out := p.Output(); out != "" {
			log.Debug("reference output", "process", p.Name, "output", tail(out))
		}
	}
}

// closeAll closes receivers.
func closeAll(sinks []receiver) {
	for _, k := range sinks {
		k.Close()
	}
}

// receiverLog is the log of the RTMP receivers: errors only, unless the bench logs details (a
// copied FLV stream starts with an empty AAC header, which the receivers warn about once each).
func receiverLog(log *slog.Logger) *slog.Logger {
	if log.Enabled(context.Background(), slog.LevelDebug) {
		return log.With("part", "rtmp receiver")
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})).With("part", "rtmp receiver")
}

// refTeeArgs are the arguments of the tee reference: one SRT listener on port in, every target
// a slave of the tee muxer that may fail alone.
func refTeeArgs(in int, targets []fanTarget) []string {
	outs := make([]string, 0, len(targets))
	for _, t := range targets {
		outs = append(outs, t.teeSlave())
	}
	// The tee muxer passes the input's codec tags (MPEG-TS stream types) on to its slaves, which
	// the FLV muxer refuses: give it FLV's own (H.264 7, AAC 10), which MPEG-TS ignores.
	return []string{"-i", refSRTListen(in), "-c", "copy", "-map", "0", "-tag:v", "7", "-tag:a", "10",
		"-f", "tee", strings.Join(outs, "|")}
}

// refRestreamArgs are the arguments of one reference restream: SRT listener on port in, copied
// to t.
func refRestreamArgs(in int, t fanTarget) []string {
	return append([]string{"-i", refSRTListen(in), "-c", "copy", "-map", "0"}, t.ffmpegOutput()...)
}
