package nal

import (
	"bytes"
	"slices"

	"github.com/sluicemedia/sluice/internal/media"
)

// Fixer is the one place where the access units of an H.264 or H.265 track are put in the
// form every reader expects, whatever wire they came on (MPEG-TS, FLV, RTP, fMP4 segments):
// access unit delimiters and empty units dropped, parameter sets learned as they come (in
// band, or from the container's configuration), and put in front of a key frame that lacks
// them. A key frame is reported as one only when a decoder can start on it (its parameter sets
// known): the stream's publisher, the one key-frame gate, lets no video through before such a
// unit. A key frame is an IDR picture (H.264), an IRAP picture (H.265), or an H.264 I-picture
// with a recovery point of zero frames (an open GOP's start; see h264Recovery). A Fixer is for
// one track and one goroutine.
type Fixer struct {
	codec         media.Codec
	vps, sps, pps []byte
	width, height int
	scratch       [][]byte // FixCopy's list before the copy, reused
}

// NewFixer returns the fixer of a track of codec c (H.265, else H.264) with the parameter sets
// its container gave, if any (empty ones are ignored; the fixer keeps copies).
func NewFixer(c media.Codec, vps, sps, pps []byte) *Fixer {
	f := &Fixer{codec: c}
	f.SetParams(vps, sps, pps)
	return f
}

// SetParams learns parameter sets given out of band (a sequence header, an SDP, an init
// segment); empty ones are ignored. It tells whether one changed.
func (f *Fixer) SetParams(vps, sps, pps []byte) (changed bool) {
	for _, n := range [][]byte{vps, sps, pps} {
		if len(n) > 0 && f.learn(Classify(f.codec, n), n) {
			changed = true
		}
	}
	return changed
}

// Ready tells whether the parameter sets the codec needs are known.
func (f *Fixer) Ready() bool {
	return len(f.sps) > 0 && len(f.pps) > 0 && (f.codec != media.CodecH265 || len(f.vps) > 0)
}

// Params returns the track's parameters: the parameter sets known (the fixer's own copies,
// read-only) and the picture size the SPS gives.
func (f *Fixer) Params() media.Params {
	return media.Params{VPS: f.vps, SPS: f.sps, PPS: f.pps, Width: f.width, Height: f.height}
}

// Fix returns the NAL units of one access unit to publish, whether it is a key frame a decoder
// can start on (one whose parameter sets are known, in band or before), and whether it changed
// a known parameter set. AUDs and empty units are left out; when a key
// frame lacks a parameter set and all are known, the known ones (which include those it
// carries) go in front, in decoding order, and its own are left out. nalus is not modified;
// out may share its units (Pack copies them), and shares the fixer's parameter sets.
func (f *Fixer) Fix(nalus [][]byte) (out [][]byte, key, changed bool) {
	return f.fix(nil, nalus)
}

// FixCopy is Fix with the units copied into one new buffer (Pack), for a caller that does not
// own the bytes it read: two allocations a unit, whatever the fixing.
func (f *Fixer) FixCopy(nalus [][]byte) (out [][]byte, key, changed bool) {
	out, key, changed = f.fix(f.scratch[:0], nalus)
	if len(out) > 0 && len(nalus) > 0 && &out[0] != &nalus[0] {
		f.scratch = out[:0]
	}
	out = Pack(out)
	clear(f.scratch[:cap(f.scratch)])
	return out, key, changed
}

// fix is Fix, building a changed list in dst.
func (f *Fixer) fix(dst, nalus [][]byte) (out [][]byte, key, changed bool) {
	var hasVPS, hasSPS, hasPPS, drop, recovery, intra bool
	for _, n := range nalus {
		if f.malformed(n) {
			drop = true
			continue
		}
		switch k := Classify(f.codec, n); k {
		case AUD:
			drop = true
		case Key:
			key = true
		case VPS, SPS, PPS:
			hasVPS, hasSPS, hasPPS = hasVPS || k == VPS, hasSPS || k == SPS, hasPPS || k == PPS
			if f.learn(k, n) {
				changed = true
			}
		default:
			if f.codec != media.CodecH265 {
				recovery = recovery || h264Recovery(n)
				intra = intra || h264IntraSlice(n)
			}
		}
	}
	// An open GOP's I-picture with a recovery point of zero frames: a decoder starts there.
	key = (key || recovery && intra) && f.Ready()
	missing := key && (!hasSPS || !hasPPS || (f.codec == media.CodecH265 && !hasVPS))
	if !drop && !missing {
		return nalus, key, changed
	}
	out = slices.Grow(dst[:0], len(nalus)+3)
	if missing {
		if f.codec == media.CodecH265 {
			out = append(out, f.vps)
		}
		out = append(out, f.sps, f.pps)
	}
	for _, n := range nalus {
		if f.malformed(n) {
			continue
		}
		switch Classify(f.codec, n) {
		case AUD:
			continue
		case VPS, SPS, PPS:
			if missing {
				continue
			}
		}
		out = append(out, n)
	}
	return out, key, changed
}

// Pack copies units into one new buffer and returns slices of it, for a caller that does not
// own the bytes it read (a reused read buffer).
func Pack(units [][]byte) [][]byte {
	size := 0
	for _, n := range units {
		size += len(n)
	}
	data := make([]byte, size)
	out := make([][]byte, len(units))
	off := 0
	for i, n := range units {
		k := copy(data[off:], n)
		out[i] = data[off : off+k : off+k]
		off += k
	}
	return out
}

// malformed tells whether a NAL unit cannot be a unit of the codec: empty, or an H.265 unit
// shorter than its two-byte header.
func (f *Fixer) malformed(n []byte) bool {
	return len(n) == 0 || (f.codec == media.CodecH265 && len(n) < 2)
}

// learn keeps a copy of parameter set n of kind k when it differs from the one known, and
// tells whether it did. A new SPS gives the picture size.
func (f *Fixer) learn(k Kind, n []byte) bool {
	var dst *[]byte
	switch {
	case k == VPS && f.codec == media.CodecH265:
		dst = &f.vps
	case k == SPS:
		dst = &f.sps
	case k == PPS:
		dst = &f.pps
	default:
		return false
	}
	if bytes.Equal(*dst, n) {
		return false
	}
	*dst = bytes.Clone(n)
	if k == SPS {
		f.width, f.height = VideoSize(f.codec, n)
	}
	return true
}
