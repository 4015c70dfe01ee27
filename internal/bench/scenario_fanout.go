package bench

import (
	"context"
	"fmt"
	"strings"
)

// fanoutScenario feeds one SRT publish to n SRT receivers through the server.
func fanoutScenario(n int) func(context.Context, *Env, Arm, *Sluice) (*setup, error) {
	return func(ctx context.Context, env *Env, arm Arm, sl *Sluice) (*setup, error) {
		st := &setup{}
		closeSinks := func() {
			for _, k := range st.sinks {
				k.Close()
			}
		}
		st.cleanup = closeSinks
		for range n {
			port, err := freePort()
			if err != nil {
				closeSinks()
				return nil, err
			}
			k, err := listenSRT(port)
			if err != nil {
				closeSinks()
				return nil, err
			}
			st.sinks = append(st.sinks, k)
		}
		in, err := freePort()
		if err != nil {
			closeSinks()
			return nil, err
		}
		pub := publish{srtAddr: fmt.Sprintf("127.0.0.1:%d", in), streamID: "publisher/bench/cam", waitProto: "udp", waitPort: in}
		st.pubs = []publish{pub}
		if arm == ArmSluice {
			server, err := sl.Create("srt-servers", map[string]any{"server_name": "bench", "server_port": in})
			if err != nil {
				closeSinks()
				return nil, err
			}
			ids := make([]string, 0, n)
			for i, k := range st.sinks {
				id, err := sl.Create("restream", map[string]any{
					"restream_name": fmt.Sprintf("fan-%d", i),
					"input": map[string]any{"input_type": "INPUT_TYPE_SRT_SOFTWARE", "input_server_id": server,
						"input_stream_id": pub.streamID},
					"output": map[string]any{"output_type": "OUTPUT_TYPE_SRT_URL",
						"output_stream_url": fmt.Sprintf("srt://127.0.0.1:%d", k.Port)},
				})
				if err != nil {
					closeSinks()
					return nil, err
				}
				ids = append(ids, id)
			}
			st.pids = func() []int { return withChildren(sl.Pid()) }
			st.check = func() (string, error) { return sluiceStates(sl, "restream", ids) }
			return st, nil
		}
		outs := make([]string, 0, n)
		for _, k := range st.sinks {
			outs = append(outs, fmt.Sprintf("[f=mpegts:onfail=ignore]srt://127.0.0.1:%d?latency=%d", k.Port, srtLatency.Microseconds()))
		}
		p, err := ffmpeg("reference tee", "-i", refSRTListen(in), "-c", "copy", "-map", "0", "-f", "tee", strings.Join(outs, "|"))
		if err != nil {
			closeSinks()
			return nil, err
		}
		procs := []*Proc{p}
		st.pids = refPids(procs)
		st.check = func() (string, error) { return "", exitedEarly(procs) }
		st.cleanup = func() { stopAll(procs); closeSinks() }
		return st, nil
	}
}
