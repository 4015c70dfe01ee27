package soak

import (
	"context"
	"fmt"
	"time"
)

// Modules of the API, as in its paths.
const (
	modVod       = "vod"
	modRestream  = "restream"
	modRecording = "recording"
	modSRT       = "srt-servers"
	modRTMP      = "rtmp-servers"
)

// Proc is a record the soak created.
type Proc struct {
	Module, ID, Name string
}

// Lane is one publisher's way into the server: where it sends, and the processes whose input
// it feeds.
type Lane struct {
	Name   string
	Target Target
	// Gap is the pause after each drop. UDP has no hang-up: its input ends a session after 2 s
	// without data, so a UDP lane waits longer for its drop to count.
	Gap time.Duration
	// Port and Transport are the server's socket the publisher sends to: a server module's
	// or a listen input's.
	Port      int
	Transport string
	Procs     []Proc
}

// Fixture is everything one round of the soak creates.
type Fixture struct {
	Servers []Proc
	Lanes   []*Lane
	// Steady is the stream transcoding restreams read: the RTMP module's key "steady".
	Steady      Target
	SteadyInput map[string]any
	// Hole is a udp:// address nobody reads.
	Hole      string
	Receivers []*Receiver
}

// Pauses after a drop.
const (
	// udpGap covers the UDP input's 2 s idle timeout, with a margin.
	udpGap = 2500 * time.Millisecond
	// tcpGap lets the server see an SRT or RTMP hang-up.
	tcpGap = 200 * time.Millisecond
)

// procSpec is a process to create on a lane.
type procSpec struct {
	module string
	input  map[string]any
	output map[string]any // restreams
	format string         // recordings
}

// laneSpec is a lane to create.
type laneSpec struct {
	name      string
	target    Target
	gap       time.Duration
	port      int
	transport string
	procs     []procSpec
}

// Setup creates an SRT and an RTMP server module with a player, a passthrough restream and a
// recording reading each module's stream "cam", and for SRT, RTMP and UDP listen inputs one
// player, one restream and one recording each, on their own ports; everything is started.
// tag keeps the names of one round apart. Restream outputs go to ffmpeg receivers, to a UDP
// port nobody reads and to the SRT module (a relay stream). On error the fixture returned
// holds what was created, for Teardown.
func Setup(ctx context.Context, c *Client, ports *Ports, tag, ffmpeg string) (*Fixture, error) {
	f := &Fixture{}
	var portErr error
	take := func() int {
		p, err := ports.Take()
		if err != nil && portErr == nil {
			portErr = err
		}
		return p
	}
	srtPort, rtmpPort, hole := take(), take(), take()
	rcvPorts := []int{take(), take(), take()}
	if portErr != nil {
		return f, fmt.Errorf("setup: %w", portErr)
	}
	f.Hole = fmt.Sprintf("udp://127.0.0.1:%d", hole)
	for _, p := range rcvPorts {
		rcv, err := StartReceiver(ctx, ffmpeg, p)
		if err != nil {
			return f, fmt.Errorf("setup: %w", err)
		}
		f.Receivers = append(f.Receivers, rcv)
	}

	srtName, rtmpName := "soak-srt-"+tag, "soak-rtmp-"+tag
	srtID, err := c.Create(ctx, modSRT, map[string]any{"server_name": srtName, "server_port": srtPort, "server_latency": 120})
	if err != nil {
		return f, fmt.Errorf("setup: %w", err)
	}
	f.Servers = append(f.Servers, Proc{modSRT, srtID, srtName})
	rtmpID, err := c.Create(ctx, modRTMP, map[string]any{"server_name": rtmpName, "server_port": rtmpPort})
	if err != nil {
		return f, fmt.Errorf("setup: %w", err)
	}
	f.Servers = append(f.Servers, Proc{modRTMP, rtmpID, rtmpName})
	for _, s := range f.Servers {
		if err := waitState(ctx, c, s.Module, s.ID, "running", 20*time.Second); err != nil {
			return f, fmt.Errorf("setup: %w", err)
		}
	}
	rtmpBase := fmt.Sprintf("rtmp://127.0.0.1:%d/live", rtmpPort)
	f.Steady = Target{Proto: ProtoRTMP, URL: rtmpBase, Key: "steady"}
	f.SteadyInput = map[string]any{"input_type": "INPUT_TYPE_RTMP_SOFTWARE", "input_server_id": rtmpID, "input_stream_id": "steady"}

	udpOut := func(url string) map[string]any {
		return map[string]any{"output_type": "OUTPUT_TYPE_UDP_URL", "output_stream_url": url}
	}
	srtIn := map[string]any{"input_type": "INPUT_TYPE_SRT_SOFTWARE", "input_server_id": srtID, "input_stream_id": "publisher/" + srtName + "/cam"}
	rtmpIn := map[string]any{"input_type": "INPUT_TYPE_RTMP_SOFTWARE", "input_server_id": rtmpID, "input_stream_id": "cam"}
	specs := []laneSpec{
		{"srt-module", Target{Proto: ProtoSRT, URL: fmt.Sprintf("srt://127.0.0.1:%d?streamid=publisher/%s/cam", srtPort, srtName)}, tcpGap, srtPort, "UDP",
			[]procSpec{{module: modVod, input: srtIn}, {module: modRestream, input: srtIn, output: udpOut(f.Hole)}, {module: modRecording, input: srtIn, format: "mp4"}}},
		{"rtmp-module", Target{Proto: ProtoRTMP, URL: rtmpBase, Key: "cam"}, tcpGap, rtmpPort, "TCP",
			[]procSpec{{module: modVod, input: rtmpIn}, {module: modRestream, input: rtmpIn, output: udpOut(f.Receivers[0].URL())}, {module: modRecording, input: rtmpIn, format: "flv"}}},
	}
	relay := map[string]any{"output_type": "OUTPUT_TYPE_SRT_URL", "output_stream_url": fmt.Sprintf("srt://127.0.0.1:%d?streamid=publisher/%s/relay", srtPort, srtName)}
	for _, l := range []struct {
		name, inputType, transport string
		proto                      string
		gap                        time.Duration
		out                        map[string]any
		format                     string
	}{
		{"srt-listen", "INPUT_TYPE_SRT_LISTEN", "UDP", ProtoSRT, tcpGap, relay, "flv"},
		{"rtmp-listen", "INPUT_TYPE_RTMP_LISTEN", "TCP", ProtoRTMP, tcpGap, udpOut(f.Receivers[1].URL()), "mp4"},
		{"udp-listen", "INPUT_TYPE_UDP_LISTEN", "UDP", ProtoUDP, udpGap, udpOut(f.Receivers[2].URL()), "mp4"},
	} {
		for _, module := range []string{modVod, modRestream, modRecording} {
			port := take()
			t := Target{Proto: l.proto, URL: fmt.Sprintf("%s://127.0.0.1:%d", l.proto, port)}
			if l.proto == ProtoRTMP {
				t.URL, t.Key = t.URL+"/live", "cam"
			}
			in := map[string]any{"input_type": l.inputType, "input_stream_listen_port": map[string]any{"port": port, "transport": l.transport}}
			specs = append(specs, laneSpec{l.name + "-" + module, t, l.gap, port, l.transport, []procSpec{{module: module, input: in, output: l.out, format: l.format}}})
		}
	}
	for _, spec := range specs {
		lane := &Lane{Name: spec.name, Target: spec.target, Gap: spec.gap, Port: spec.port, Transport: spec.transport}
		f.Lanes = append(f.Lanes, lane)
		for i, p := range spec.procs {
			name := fmt.Sprintf("soak-%s-%s-%d", tag, spec.name, i)
			body := map[string]any{"input": p.input}
			switch p.module {
			case modVod:
				body["vod_name"], body["vod_port"] = name, take()
				for k, v := range map[string]int{"initial_live_manifest_size": 3, "live_sync_duration_count": 4, "hls_fragment_size": 2,
					"hls_fragment_length": 20, "dash_fragment_size": 2, "dash_fragment_length": 20} {
					body[k] = v
				}
			case modRestream:
				body["restream_name"], body["output"] = name, p.output
			case modRecording:
				body["recording_name"], body["recording_type"], body["output_format"] = name, "RECORDING_STREAM_TO_FILE", p.format
			}
			if portErr != nil {
				return f, fmt.Errorf("setup: %w", portErr)
			}
			id, err := c.Create(ctx, p.module, body)
			if err != nil {
				return f, fmt.Errorf("setup lane %s: %w", spec.name, err)
			}
			lane.Procs = append(lane.Procs, Proc{p.module, id, name})
		}
	}
	return f, nil
}

// Procs lists the processes of every lane.
func (f *Fixture) Procs() []Proc {
	var out []Proc
	for _, l := range f.Lanes {
		out = append(out, l.Procs...)
	}
	return out
}

// waitState polls a record until its state is want.
func waitState(ctx context.Context, c *Client, module, id, want string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		r, err := c.Get(ctx, module, id)
		if err != nil {
			return err
		}
		if r.State == want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s %s: state %q (last error %q), not %q within %v", module, id, r.State, r.LastError, want, d)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
