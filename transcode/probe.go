package transcode

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/sluicemedia/sluice/internal/supervisor"
)

// probeTimeout bounds each ffmpeg run of the probe.
const probeTimeout = 10 * time.Second

// prober holds what the probe looks at, so that tests can point it elsewhere.
type prober struct {
	ffmpeg      string
	nvidiaDev   string // a device node that exists with an NVIDIA driver
	nvidiaSMI   string // the NVIDIA tool looked up in PATH when the node is missing
	renderNode  string // the DRM render node VAAPI and QSV need
	timeout     time.Duration
	lookPath    func(string) (string, error)
	testEncodes bool
}

// ProbeHW finds the hardware encoders that work here: those ffmpeg was built with
// (ffmpeg -encoders) whose device is present (/dev/nvidia0 or nvidia-smi for NVENC,
// /dev/dri/renderD128 for QSV and VAAPI) and that encode one test frame, each ffmpeg run
// bounded by 10 s. HW.Probed says why each other one is missing. It never fails: an ffmpeg
// that cannot run leaves no hardware encoder.
func ProbeHW(ctx context.Context, ffmpegPath string) HW {
	if ffmpegPath == "" {
		ffmpegPath = "ffmpeg"
	}
	p := prober{
		ffmpeg: ffmpegPath, nvidiaDev: "/dev/nvidia0", nvidiaSMI: "nvidia-smi",
		renderNode: DefaultVAAPIDevice, timeout: probeTimeout, lookPath: exec.LookPath, testEncodes: true,
	}
	return p.probe(ctx)
}

func (p prober) probe(ctx context.Context) HW {
	hw := HW{VAAPIDevice: p.renderNode}
	built, err := p.encoders(ctx)
	if err != nil {
		hw.Probed = []string{fmt.Sprintf("ffmpeg -encoders: %v", err)}
		return hw
	}
	for _, enc := range hwCandidates {
		if why := p.check(ctx, enc, built); why != "" {
			hw.Probed = append(hw.Probed, enc+": "+why)
			continue
		}
		hw.Encoders = append(hw.Encoders, enc)
	}
	return hw
}

// check returns why enc is not usable, or "" when it is.
func (p prober) check(ctx context.Context, enc string, built map[string]bool) string {
	if !built[enc] {
		return "not built into ffmpeg"
	}
	switch family(enc) {
	case famNVENC:
		if !exists(p.nvidiaDev) {
			if _, err := p.lookPath(p.nvidiaSMI); err != nil {
				return fmt.Sprintf("no NVIDIA device (%s missing, no %s)", p.nvidiaDev, p.nvidiaSMI)
			}
		}
	case famQSV, famVAAPI:
		if !exists(p.renderNode) {
			return fmt.Sprintf("no render device (%s missing)", p.renderNode)
		}
	}
	if !p.testEncodes {
		return ""
	}
	if err := p.testEncode(ctx, enc); err != nil {
		return "test encode failed: " + err.Error()
	}
	return ""
}

// encoders lists the encoder names ffmpeg was built with.
func (p prober) encoders(ctx context.Context) (map[string]bool, error) {
	var out bytes.Buffer
	if err := p.run(ctx, &out, "-hide_banner", "-encoders"); err != nil {
		return nil, err
	}
	names := map[string]bool{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		// " V....D h264_nvenc   NVIDIA NVENC H.264 encoder (codec h264)"
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && len(f[0]) == 6 && strings.ContainsAny(f[0][:1], "VAS") {
			names[f[1]] = true
		}
	}
	return names, nil
}

// testEncode encodes one frame of a null source with enc.
func (p prober) testEncode(ctx context.Context, enc string) error {
	args := []string{"-hide_banner", "-nostdin", "-loglevel", "error"}
	vf := ""
	switch family(enc) {
	case famVAAPI:
		args = append(args, "-vaapi_device", p.renderNode)
		vf = "format=nv12,hwupload"
	case famQSV:
		vf = "format=nv12"
	}
	args = append(args, "-f", "lavfi", "-i", "nullsrc=s=256x144", "-frames:v", "1")
	if vf != "" {
		args = append(args, "-vf", vf)
	}
	args = append(args, "-c:v", enc, "-f", "null", "-")
	return p.run(ctx, nil, args...)
}

// run runs ffmpeg with args, bounded by the probe timeout, as a supervised child.
func (p prober) run(ctx context.Context, stdout *bytes.Buffer, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	cmd := supervisor.Command{Path: p.ffmpeg, Args: args, Grace: time.Second, Logger: slog.New(slog.DiscardHandler)}
	if stdout != nil {
		cmd.Stdout = stdout
	}
	return cmd.Run(ctx)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
