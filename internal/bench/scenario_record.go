package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// recordScenario records one SRT publish to MP4.
func recordScenario(ctx context.Context, env *Env, arm Arm, sl *Sluice) (*setup, error) {
	in, err := freePort()
	if err != nil {
		return nil, err
	}
	pub := publish{srtAddrs: []string{fmt.Sprintf("127.0.0.1:%d", in)}, streamID: "bench", waitProto: "udp", waitPorts: []int{in}}
	st := &setup{pubs: []publish{pub}, cleanup: func() {}}
	if arm == ArmSluice {
		id, err := sl.Create("recording", map[string]any{"recording_name": "bench", "recording_type": "RECORDING_STREAM_TO_FILE",
			"output_format": "mp4", "input": listenInput("INPUT_TYPE_SRT_LISTEN", in)})
		if err != nil {
			return nil, err
		}
		st.pids = func() []int { return withChildren(sl.Pid()) }
		st.check = func() (string, error) { return sluiceStates(sl, "recording", []string{id}) }
		st.after = func() (string, error) {
			rec, err := sl.Record("recording", id)
			if err != nil {
				return "", err
			}
			files, _ := rec["recordedFiles"].([]any)
			var size float64
			for _, f := range files {
				if m, ok := f.(map[string]any); ok {
					s, _ := m["size"].(float64)
					size += s
				}
			}
			return fmt.Sprintf("%d file(s), %.1f MB.", len(files), size/1e6), nil
		}
		return st, nil
	}
	dir, err := os.MkdirTemp(env.WorkDir, "mp4-")
	if err != nil {
		return nil, fmt.Errorf("reference folder: %w", err)
	}
	out := filepath.Join(dir, "out.mp4")
	p, err := ffmpeg("reference mp4", "-i", refSRTListen(in), "-c", "copy", "-map", "0", "-bsf:a", "aac_adtstoasc", "-f", "mp4", out)
	if err != nil {
		return nil, err
	}
	procs := []*Proc{p}
	st.pids = refPids(procs)
	st.check = func() (string, error) { return "", exitedEarly(procs) }
	st.after = func() (string, error) {
		stopAll(procs)
		fi, err := os.Stat(out)
		if err != nil {
			return "no file.", nil
		}
		return fmt.Sprintf("1 file, %.1f MB.", float64(fi.Size())/1e6), nil
	}
	st.cleanup = func() { stopAll(procs) }
	return st, nil
}
