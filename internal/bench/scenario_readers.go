package bench

import (
	"context"
	"fmt"
	"math"
	"time"
)

// The SRT server module's stream of the SRT scenarios, and the reader fan-out's settings.
const (
	publisherStreamID = "publisher/bench/cam" // the pacer publishes with it
	receiverStreamID  = "receiver/bench/cam"  // the receivers call with it
	readersN          = 50                    // receivers of srt-readers-50
	// readersAlone is how long the server runs with the publisher alone before the readers
	// join: two GOPs of the clip (a key frame every 2 s), so that what it keeps of the stream has
	// its steady size when the RSS without readers is taken.
	readersAlone = 4 * time.Second
	// joinTimeout bounds the wait for every receiver of a run to be connected.
	joinTimeout = 20 * time.Second
)

// srtServer creates the bench's SRT server module on a free port, at the bench's latency (its
// API option is in milliseconds), and answers its address.
func srtServer(sl *Sluice) (string, int, error) {
	in, err := freePort()
	if err != nil {
		return "", 0, err
	}
	body := map[string]any{"server_name": "bench", "server_port": in, "server_latency": srtLatency.Milliseconds()}
	if _, err := sl.Create("srt-servers", body); err != nil {
		return "", 0, err
	}
	return fmt.Sprintf("127.0.0.1:%d", in), in, nil
}

// readersScenario publishes to the SRT server module, measures the server with the publisher
// alone, then has n receivers call it and measures it with them. Both arms are a sluice: this
// build, and for the reference the gosrt-based build.
func readersScenario(n int) func(context.Context, *Env, Arm, *Sluice) (*setup, error) {
	return func(ctx context.Context, env *Env, arm Arm, sl *Sluice) (*setup, error) {
		addr, port, err := srtServer(sl)
		if err != nil {
			return nil, err
		}
		st := &setup{pubs: []publish{{srtAddrs: []string{addr}, streamID: publisherStreamID, waitProto: "udp", waitPorts: []int{port}}}}
		st.cleanup = func() { closeAll(st.sinks) }
		st.pids = func() []int { return withChildren(sl.Pid()) }
		st.join = func(ctx context.Context, sents []*Sent, res *RunResult) error {
			if err := waitPacing(ctx, sents[0]); err != nil {
				return err
			}
			res.AloneRSS = Measure(ctx, st.pids, readersAlone).PeakRSS
			callers := make([]*srtCaller, 0, n)
			for range n {
				k := callSRT(addr, receiverStreamID, env.Clip, false)
				callers = append(callers, k)
				st.sinks = append(st.sinks, k)
			}
			if err := waitAllUp(ctx, callers); err != nil {
				return err
			}
			res.Readers = n
			return nil
		}
		return st, nil
	}
}

// waitPacing waits until the pacer started, its connections up.
func waitPacing(ctx context.Context, s *Sent) error {
	select {
	case <-s.Started():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(joinTimeout):
		return fmt.Errorf("the publisher did not start within %v", joinTimeout)
	}
}

// waitAllUp waits until every receiver is connected, within joinTimeout.
func waitAllUp(ctx context.Context, callers []*srtCaller) error {
	ctx, cancel := context.WithTimeout(ctx, joinTimeout)
	defer cancel()
	for _, k := range callers {
		if err := k.waitUp(ctx); err != nil {
			return err
		}
	}
	return nil
}

// rssPerReader is what each reader adds to the server's memory, bytes: the peak RSS with the
// readers less the peak RSS with the publisher alone, over the readers; NaN without readers or
// without a figure alone.
func rssPerReader(with, alone int64, readers int) float64 {
	if readers <= 0 || alone <= 0 || with <= 0 {
		return math.NaN()
	}
	return float64(with-alone) / float64(readers)
}
