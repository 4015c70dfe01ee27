package transcode

import (
	"fmt"
	"slices"
	"strings"
)

// DefaultVAAPIDevice is the DRM render node VAAPI (and QSV) encoders use.
const DefaultVAAPIDevice = "/dev/dri/renderD128"

// HW is what ProbeHW found: the hardware encoders that work on this machine. The zero value
// has none.
type HW struct {
	// Encoders are ffmpeg's names of the hardware encoders that passed the probe
	// ("h264_nvenc", "hevc_vaapi"), in the order the probe tries them: NVENC, QSV, VAAPI.
	Encoders []string
	// VAAPIDevice is the render node for VAAPI encoders; empty is DefaultVAAPIDevice.
	VAAPIDevice string
	// Probed says, for each encoder tried and not available, why ("h264_nvenc: no NVIDIA
	// device"). Empty when no probe ran.
	Probed []string
}

// Available returns the names of the working hardware encoders.
func (h HW) Available() []string { return slices.Clone(h.Encoders) }

// hwFamily is a kind of hardware encoder, by its ffmpeg name suffix.
type hwFamily string

const (
	famNone  hwFamily = ""
	famNVENC hwFamily = "nvenc"
	famQSV   hwFamily = "qsv"
	famVAAPI hwFamily = "vaapi"
)

// hwCandidates are the hardware encoders the probe tries, in order of preference.
var hwCandidates = []string{"h264_nvenc", "hevc_nvenc", "h264_qsv", "hevc_qsv", "h264_vaapi", "hevc_vaapi"}

// family returns the hardware family of an encoder name, famNone for a software encoder.
func family(enc string) hwFamily {
	for _, f := range []hwFamily{famNVENC, famQSV, famVAAPI} {
		if strings.HasSuffix(enc, "_"+string(f)) {
			return f
		}
	}
	return famNone
}

// hardwareEncoder picks the first working encoder for codec ("h264" or "hevc"), or fails with
// ErrNoHardware naming what is available and what was probed.
func (h HW) hardwareEncoder(field, codec string) (string, error) {
	for _, e := range h.Encoders {
		if strings.HasPrefix(e, codec+"_") {
			return e, nil
		}
	}
	avail := "none"
	if len(h.Encoders) > 0 {
		avail = strings.Join(h.Encoders, ", ")
	}
	probed := "hardware was not probed"
	if len(h.Probed) > 0 {
		probed = "probed " + groupNotes(h.Probed)
	}
	return "", fmt.Errorf("video_transcoding %q: %w for %s (available: %s; %s)", field, ErrNoHardware, codec, avail, probed)
}

// vaapiDevice returns the render node to use.
func (h HW) vaapiDevice() string {
	if h.VAAPIDevice != "" {
		return h.VAAPIDevice
	}
	return DefaultVAAPIDevice
}

// groupNotes joins "encoder: reason" notes, naming encoders with the same reason together:
// "h264_nvenc, hevc_nvenc: no NVIDIA device; h264_qsv: ...".
func groupNotes(notes []string) string {
	var reasons []string
	names := map[string][]string{}
	for _, n := range notes {
		name, why, ok := strings.Cut(n, ": ")
		if !ok {
			name, why = "", n
		}
		if _, seen := names[why]; !seen {
			reasons = append(reasons, why)
		}
		if name != "" {
			names[why] = append(names[why], name)
		} else if names[why] == nil {
			names[why] = []string{}
		}
	}
	out := make([]string, len(reasons))
	for i, why := range reasons {
		if len(names[why]) == 0 {
			out[i] = why
			continue
		}
		out[i] = strings.Join(names[why], ", ") + ": " + why
	}
	return strings.Join(out, "; ")
}
