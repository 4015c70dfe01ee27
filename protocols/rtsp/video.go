package rtsp

import (
	"errors"
	"fmt"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h265"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/nal"
)

// errEmptyUnit means an access unit held nothing to publish (only delimiters or malformed NAL
// units).
var errEmptyUnit = errors.New("empty access unit")

// dtsExtractor is mediacommon's H.264 or H.265 DTS extractor.
type dtsExtractor interface {
	Extract(au [][]byte, pts int64) (int64, error)
}

// videoTrack maps the access units of one H.264 or H.265 track to the bus: the track's
// nal.Fixer (parameter sets, AUDs) and the DTS RTP does not carry.
type videoTrack struct {
	codec      media.Codec
	fix        *nal.Fixer
	dts        dtsExtractor
	dtsStarted bool  // the extractor has had its first key frame
	dtsErrs    int64 // units whose DTS could not be derived from the picture order
}

// newVideoTrack returns the track with the parameter sets the SDP gave, if any.
func newVideoTrack(c media.Codec, vps, sps, pps []byte) *videoTrack {
	v := &videoTrack{codec: c, fix: nal.NewFixer(c, vps, sps, pps)}
	v.resetDTS()
	return v
}

func (v *videoTrack) resetDTS() {
	v.dtsStarted = false
	if v.codec == media.CodecH265 {
		d := &h265.DTSExtractor{}
		d.Initialize()
		v.dts = d
		return
	}
	d := &h264.DTSExtractor{}
	d.Initialize()
	v.dts = d
}

// ready tells whether the parameter sets are known.
func (v *videoTrack) ready() bool { return v.fix.Ready() }

// params returns the track's parameters.
func (v *videoTrack) params() media.Params { return v.fix.Params() }

// unit turns the NAL units of one access unit, presented at pts (90 kHz), into a normalised
// unit with its own copy of the data. It fails with errEmptyUnit when nothing is left to
// publish. Units before the first key frame go on: the stream's publisher drops them.
func (v *videoTrack) unit(nalus [][]byte, pts int64) (*media.AccessUnit, error) {
	payload, key, _ := v.fix.FixCopy(nalus)
	if len(payload) == 0 {
		return nil, errEmptyUnit
	}
	if !key && !v.dtsStarted {
		// The extractor starts at a key frame with its parameter sets; until then the
		// units keep their PTS (the stream's publisher drops them anyway).
		return &media.AccessUnit{PTS: pts, DTS: pts, Payload: payload}, nil
	}
	v.dtsStarted = true
	dts, err := v.extractDTS(payload, pts)
	if err != nil {
		// The picture order cannot be read: present the unit as is, and start the extractor
		// over; it picks up again at the next key frame, whose parameter sets it needs.
		v.dtsErrs++
		v.resetDTS()
		dts = pts
	}
	// Steps back and resets of the source's clock are the stream publisher's to repair.
	return &media.AccessUnit{PTS: pts, DTS: dts, Key: key, Payload: payload}, nil
}

// extractDTS runs the DTS extractor, a third-party parser of untrusted bytes: a panic there
// is an error here.
func (v *videoTrack) extractDTS(payload [][]byte, pts int64) (dts int64, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("DTS extractor: %v", r)
		}
	}()
	return v.dts.Extract(payload, pts)
}
