package bench

import (
	"context"
	"fmt"
)

// relayScenario publishes into a relay and has one receiver read it back, placing every
// payload in the clip to time it: sluice's SRT server module (publisher and receiver stream
// ids), or srt-live-transmit between two listeners.
func relayScenario(ctx context.Context, env *Env, arm Arm, sl *Sluice) (*setup, error) {
	st := &setup{cleanup: func() {}}
	var recvAddr, recvID string
	if arm == ArmSluice {
		addr, port, err := srtServer(sl)
		if err != nil {
			return nil, err
		}
		st.pubs = []publish{{srtAddrs: []string{addr}, streamID: publisherStreamID, waitProto: "udp", waitPorts: []int{port}}}
		st.pids = func() []int { return withChildren(sl.Pid()) }
		recvAddr, recvID = addr, receiverStreamID
	} else {
		in, err := freePort()
		if err != nil {
			return nil, err
		}
		out, err := freePort()
		if err != nil {
			return nil, err
		}
		p, err := startProc("srt-live-transmit", "srt-live-transmit", nil, refRelayArgs(in, out)...)
		if err != nil {
			return nil, err
		}
		procs := []*Proc{p}
		st.pubs = []publish{{srtAddrs: []string{fmt.Sprintf("127.0.0.1:%d", in)}, streamID: "bench", waitProto: "udp", waitPorts: []int{in}}}
		st.pids = refPids(procs)
		st.check = func() (string, error) { return "", exitedEarly(procs) }
		st.cleanup = func() { stopAll(procs) }
		recvAddr, recvID = fmt.Sprintf("127.0.0.1:%d", out), "bench"
	}
	var k *srtCaller
	stop := st.cleanup
	st.cleanup = func() {
		if k != nil {
			k.Close()
		}
		stop()
	}
	st.join = func(ctx context.Context, sents []*Sent, res *RunResult) error {
		k = callSRT(recvAddr, recvID, env.Clip, true)
		st.sinks = []receiver{k}
		return waitAllUp(ctx, []*srtCaller{k})
	}
	st.collect = func(sents []*Sent, res *RunResult) {
		// Both hops deliver at their configured latency: the publisher's into the relay, and
		// the relay's to the receiver.
		res.Latencies, res.PacketsLost, res.Unplaced = k.Stamped(sents[0], 2*srtLatency)
		env.Log.Debug("relay latency", "arm", arm, "payloads", len(res.Latencies), "p50_ms", Percentile(res.Latencies, 50),
			"p99_ms", Percentile(res.Latencies, 99), "max_ms", Percentile(res.Latencies, 100), "over_5ms", countOver(res.Latencies, 5))
	}
	return st, nil
}

// refRelayArgs are srt-live-transmit's arguments: an SRT listener on port in relayed to an SRT
// listener on port out, both at the bench's latency (its URL option is in milliseconds).
func refRelayArgs(in, out int) []string {
	ms := srtLatency.Milliseconds()
	return []string{
		fmt.Sprintf("srt://127.0.0.1:%d?mode=listener&latency=%d", in, ms),
		fmt.Sprintf("srt://127.0.0.1:%d?mode=listener&latency=%d", out, ms),
	}
}

// countOver counts the values of xs over limit.
func countOver(xs []float64, limit float64) int {
	n := 0
	for _, x := range xs {
		if x > limit {
			n++
		}
	}
	return n
}
