package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// playerScenario feeds n players (proto "srt" or "rtmp" listen inputs), one publisher each.
func playerScenario(n int, proto string) func(context.Context, *Env, Arm, *Sluice) (*setup, error) {
	return func(ctx context.Context, env *Env, arm Arm, sl *Sluice) (*setup, error) {
		st := &setup{cleanup: func() {}}
		var procs []*Proc
		var ids []string
		for i := range n {
			in, err := freePort()
			if err != nil {
				return nil, err
			}
			pub := publish{srtAddrs: []string{fmt.Sprintf("127.0.0.1:%d", in)}, streamID: "bench", waitProto: "udp", waitPorts: []int{in}}
			kind := "INPUT_TYPE_SRT_LISTEN"
			if proto == "rtmp" {
				pub = publish{rtmpURL: fmt.Sprintf("rtmp://127.0.0.1:%d/live/bench", in), waitProto: "tcp", waitPorts: []int{in}}
				kind = "INPUT_TYPE_RTMP_LISTEN"
			}
			if arm == ArmSluice {
				vod, err := freePort()
				if err != nil {
					return nil, err
				}
				id, err := sl.Create("vod", map[string]any{
					"vod_name": fmt.Sprintf("bench-%d", i), "vod_port": vod, "input": listenInput(kind, in),
					"initial_live_manifest_size": 1, "live_sync_duration_count": 4,
					"hls_fragment_size": 2, "hls_fragment_length": 20, "dash_fragment_size": 2, "dash_fragment_length": 20,
				})
				if err != nil {
					return nil, err
				}
				ids = append(ids, id)
				pub.playlist = httpPlaylist(fmt.Sprintf("http://127.0.0.1:%d/hls/%s/%s/index.m3u8", vod, id, id))
			} else {
				dir, err := os.MkdirTemp(env.WorkDir, "hls-")
				if err != nil {
					return nil, fmt.Errorf("reference folder: %w", err)
				}
				input := []string{"-i", refSRTListen(in)}
				if proto == "rtmp" {
					input = []string{"-listen", "1", "-i", pub.rtmpURL}
				}
				p, err := ffmpeg(fmt.Sprintf("reference hls %d", i), append(input, refHLS(dir)...)...)
				if err != nil {
					stopAll(procs)
					return nil, err
				}
				procs = append(procs, p)
				pub.playlist = filePlaylist(filepath.Join(dir, "index.m3u8"))
			}
			st.pubs = append(st.pubs, pub)
		}
		if arm == ArmSluice {
			st.pids = func() []int { return withChildren(sl.Pid()) }
			st.check = func() (string, error) { return sluiceStates(sl, "vod", ids) }
			return st, nil
		}
		st.pids = refPids(procs)
		st.check = func() (string, error) { return "", exitedEarly(procs) }
		st.cleanup = func() { stopAll(procs) }
		return st, nil
	}
}
