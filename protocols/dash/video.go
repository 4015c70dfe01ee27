package dash

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h265"

	"github.com/sluicemedia/sluice/internal/media"
)

// NAL unit types this file looks at. H.264: the low 5 bits of the first byte; H.265: bits 1-6.
const (
	h264IDR = 5
	h264SPS = 7
	h264PPS = 8
	h264AUD = 9

	h265IRAPFirst = 16 // BLA_W_LP
	h265IRAPLast  = 23 // RSV_IRAP_VCL23
	h265VPS       = 32
	h265SPS       = 33
	h265PPS       = 34
	h265AUD       = 35
)

// videoFixer normalises the access units of one H.264 or H.265 track: it drops AUDs, learns
// the parameter sets (from the init segment or in-band), finds key frames and puts the
// parameter sets in front of a key frame that lacks them. These helpers are this package's
// own, kept small, until a shared NAL package exists.
type videoFixer struct {
	h265          bool
	vps, sps, pps []byte
}

func newVideoFixer(codec media.Codec, vps, sps, pps []byte) *videoFixer {
	return &videoFixer{h265: codec == media.CodecH265, vps: clone(vps), sps: clone(sps), pps: clone(pps)}
}

// ready tells whether the parameter sets the codec needs are known.
func (v *videoFixer) ready() bool {
	return len(v.sps) > 0 && len(v.pps) > 0 && (!v.h265 || len(v.vps) > 0)
}

// params returns the track parameters: the parameter sets and the picture size from the SPS.
func (v *videoFixer) params() media.Params {
	p := media.Params{VPS: v.vps, SPS: v.sps, PPS: v.pps}
	p.Width, p.Height = spsSize(v.h265, v.sps)
	return p
}

// nalType returns the type of a NAL unit, which must not be empty.
func (v *videoFixer) nalType(n []byte) byte {
	if v.h265 {
		return (n[0] >> 1) & 0x3f
	}
	return n[0] & 0x1f
}

// fix returns the NAL units of au to publish, whether it is a key frame, and whether it
// changed a parameter set. au is not modified; the result may share its units.
func (v *videoFixer) fix(au [][]byte) (out [][]byte, key, changed bool) {
	var hasVPS, hasSPS, hasPPS, drop bool
	for _, n := range au {
		if len(n) == 0 || (v.h265 && len(n) < 2) {
			drop = true
			continue
		}
		switch t := v.nalType(n); {
		case !v.h265 && t == h264AUD, v.h265 && t == h265AUD:
			drop = true
		case !v.h265 && t == h264IDR, v.h265 && t >= h265IRAPFirst && t <= h265IRAPLast:
			key = true
		case v.h265 && t == h265VPS:
			hasVPS = true
			changed = v.learn(&v.vps, n) || changed
		case !v.h265 && t == h264SPS, v.h265 && t == h265SPS:
			hasSPS = true
			changed = v.learn(&v.sps, n) || changed
		case !v.h265 && t == h264PPS, v.h265 && t == h265PPS:
			hasPPS = true
			changed = v.learn(&v.pps, n) || changed
		}
	}
	missing := key && v.ready() && (!hasSPS || !hasPPS || (v.h265 && !hasVPS))
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
		case !v.h265 && t == h264AUD, v.h265 && t == h265AUD:
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
		return t == h265VPS || t == h265SPS || t == h265PPS
	}
	return t == h264SPS || t == h264PPS
}

// learn keeps a copy of a parameter set and tells whether it differs from the one known.
func (v *videoFixer) learn(dst *[]byte, n []byte) bool {
	if bytes.Equal(*dst, n) {
		return false
	}
	*dst = clone(n)
	return true
}

// spsSize returns the picture size an SPS gives, or zeros when it does not parse.
func spsSize(isH265 bool, sps []byte) (w, h int) {
	if len(sps) == 0 {
		return 0, 0
	}
	if isH265 {
		var s h265.SPS
		if err := s.Unmarshal(sps); err != nil {
			return 0, 0
		}
		return s.Width(), s.Height()
	}
	var s h264.SPS
	if err := s.Unmarshal(sps); err != nil {
		return 0, 0
	}
	return s.Width(), s.Height()
}

// clone copies b, so that a kept parameter set does not pin the segment it came in.
func clone(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return slices.Clone(b)
}

// maxNALUnits bounds the NAL units split out of one sample.
const maxNALUnits = 1024

// splitNALUnits splits a sample of 4-byte length-prefixed NAL units (the only length size
// mp4ff reads in avcC and hvcC). Empty units are skipped.
func splitNALUnits(b []byte) ([][]byte, error) {
	var out [][]byte
	for len(b) > 0 {
		if len(b) < 4 {
			return nil, fmt.Errorf("%w: %d trailing bytes in a sample", errFMP4, len(b))
		}
		n := uint64(b[0])<<24 | uint64(b[1])<<16 | uint64(b[2])<<8 | uint64(b[3])
		b = b[4:]
		if n > uint64(len(b)) {
			return nil, fmt.Errorf("%w: NAL unit of %d bytes in %d", errFMP4, n, len(b))
		}
		if n > 0 {
			if len(out) >= maxNALUnits {
				return nil, fmt.Errorf("%w: over %d NAL units in a sample", errFMP4, maxNALUnits)
			}
			out = append(out, b[:n:n])
		}
		b = b[n:]
	}
	return out, nil
}
