package ingest

import (
	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/nal"
)

// VideoFixer is the parameter-set fixer of the HLS and DASH pulls: nal.Fixer, the one every
// wire's video goes through.
type VideoFixer = nal.Fixer

// NewVideoFixer returns nal.NewFixer(codec, vps, sps, pps).
func NewVideoFixer(codec media.Codec, vps, sps, pps []byte) *VideoFixer {
	return nal.NewFixer(codec, vps, sps, pps)
}
