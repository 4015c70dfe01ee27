package rtsp

import (
	"errors"
	"fmt"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h265"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/nal"
)

// errNotReady means a unit was dropped while the track waits for its first decodable key frame.
var errNotReady = errors.New("waiting for a key frame with parameter sets")

// dtsExtractor is mediacommon's H.264 or H.265 DTS extractor.
type dtsExtractor interface {
	Extract(au [][]byte, pts int64) (int64, error)
}

// videoTrack maps the access units of one H.264 or H.265 track to the bus: the track's
// nal.Fixer (parameter sets, AUDs, the key-frame gate) and the DTS RTP does not carry.
type videoTrack struct {
	codec   media.Codec
	fix     *nal.Fixer
	dts     dtsExtractor
	dtsErrs int64 // units whose DTS could not be derived from the picture order
}

// newVideoTrack returns the track with the parameter sets the SDP gave, if any.
func newVideoTrack(c media.Codec, vps, sps, pps []byte) *videoTrack {
	v := &videoTrack{codec: c, fix: nal.NewFixer(c, vps, sps, pps)}
	v.resetDTS()
	return v
}

func (v *videoTrack) resetDTS() {
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
// unit with its own copy of the data. It fails with errNotReady before the first key frame.
func (v *videoTrack) unit(nalus [][]byte, pts int64) (*media.AccessUnit, error) {
	payload, key, _ := v.fix.FixCopy(nalus)
	if len(payload) == 0 || !v.fix.Decodable(key) {
		return nil, errNotReady
	}

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
