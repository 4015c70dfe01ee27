package ingest

import (
	"bytes"
	"slices"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/nal"
)

// NAL unit types this file looks at. H.264: the low 5 bits of the first byte; H.265: bits 1-6.
const (
	fixh264IDR = 5
	fixh264SPS = 7
	fixh264PPS = 8
	fixh264AUD = 9

	fixh265IRAPFirst = 16 // BLA_W_LP
	fixh265IRAPLast  = 23 // RSV_IRAP_VCL23
	fixh265VPS       = 32
	fixh265SPS       = 33
	fixh265PPS       = 34
	fixh265AUD       = 35
)

// VideoFixer normalises the access units of one H.264 or H.265 track read from a container
// that does not do it (HLS and DASH segments): it drops AUDs, learns the parameter sets (from
// the init segment or in-band), finds key frames and puts the parameter sets in front of a key
// frame that lacks them.
type VideoFixer struct {
	h265          bool
	vps, sps, pps []byte
}

// NewVideoFixer starts with the parameter sets a container gave, if any.
func NewVideoFixer(codec media.Codec, vps, sps, pps []byte) *VideoFixer {
	return &VideoFixer{h265: codec == media.CodecH265, vps: cloneBytes(vps), sps: cloneBytes(sps), pps: cloneBytes(pps)}
}

// Ready tells whether the parameter sets the codec needs are known.
func (v *VideoFixer) Ready() bool {
	return len(v.sps) > 0 && len(v.pps) > 0 && (!v.h265 || len(v.vps) > 0)
}

// Params returns the track parameters: the parameter sets and the picture size from the SPS.
func (v *VideoFixer) Params() media.Params {
	p := media.Params{VPS: v.vps, SPS: v.sps, PPS: v.pps}
	p.Width, p.Height = nal.VideoSize(v.codec(), v.sps)
	return p
}

// nalType returns the type of a NAL unit, which must not be empty.
func (v *VideoFixer) nalType(n []byte) byte {
	if v.h265 {
		return (n[0] >> 1) & 0x3f
	}
	return n[0] & 0x1f
}

// Fix returns the NAL units of au to publish, whether it is a key frame, and whether it
// changed a parameter set. au is not modified; the result may share its units.
func (v *VideoFixer) Fix(au [][]byte) (out [][]byte, key, changed bool) {
	var hasVPS, hasSPS, hasPPS, drop bool
	for _, n := range au {
		if len(n) == 0 || (v.h265 && len(n) < 2) {
			drop = true
			continue
		}
		switch t := v.nalType(n); {
		case !v.h265 && t == fixh264AUD, v.h265 && t == fixh265AUD:
			drop = true
		case !v.h265 && t == fixh264IDR, v.h265 && t >= fixh265IRAPFirst && t <= fixh265IRAPLast:
			key = true
		case v.h265 && t == fixh265VPS:
			hasVPS = true
			changed = v.learn(&v.vps, n) || changed
		case !v.h265 && t == fixh264SPS, v.h265 && t == fixh265SPS:
			hasSPS = true
			changed = v.learn(&v.sps, n) || changed
		case !v.h265 && t == fixh264PPS, v.h265 && t == fixh265PPS:
			hasPPS = true
			changed = v.learn(&v.pps, n) || changed
		}
	}
	missing := key && v.Ready() && (!hasSPS || !hasPPS || (v.h265 && !hasVPS))
	if !drop && !missing {
		return au, key, changed
	}
	// Parameter sets go first, in decoding order (VPS, SPS, PPS), so when one is missing all
	// are put in front from what is known (which includes the in-band ones just learned).
	out = make([][]byte, 0, len(au)+3)
	if missing {
		if v.h265 {
			out = append(out, v.vps)
		}
		out = append(out, v.sps, v.pps)
	}
	for _, n := range au {
		if len(n) == 0 || (v.h265 && len(n) < 2) {
			continue
		}
		switch t := v.nalType(n); {
		case !v.h265 && t == fixh264AUD, v.h265 && t == fixh265AUD:
			continue
		case missing && isParamSet(v.h265, t):
			continue
		}
		out = append(out, n)
	}
	return out, key, changed
}

// isParamSet tells whether a NAL unit type is a VPS, SPS or PPS.
func isParamSet(isH265 bool, t byte) bool {
	if isH265 {
		return t == fixh265VPS || t == fixh265SPS || t == fixh265PPS
	}
	return t == fixh264SPS || t == fixh264PPS
}

// learn keeps a copy of a parameter set and tells whether it differs from the one known.
func (v *VideoFixer) learn(dst *[]byte, n []byte) bool {
	if bytes.Equal(*dst, n) {
		return false
	}
	*dst = cloneBytes(n)
	return true
}

// cloneBytes copies b, so that a kept parameter set does not pin the segment it came in.
func cloneBytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return slices.Clone(b)
}

func (v *VideoFixer) codec() media.Codec {
	if v.h265 {
		return media.CodecH265
	}
	return media.CodecH264
}
