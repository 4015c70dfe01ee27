package rtsp

import (
	"bytes"
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

// videoTrack normalises the access units of one H.264 or H.265 track.
type videoTrack struct {
	codec         media.Codec
	vps, sps, pps []byte
	width, height int

	sawKey  bool
	dts     dtsExtractor
	mono    monotonic
	dtsErrs int64 // units whose DTS could not be derived from the picture order
}

// newVideoTrack returns the normaliser of a track with the parameter sets the SDP gave, if any.
func newVideoTrack(c media.Codec, vps, sps, pps []byte) *videoTrack {
	v := &videoTrack{codec: c}
	v.setParam(nal.VPS, vps)
	v.setParam(nal.SPS, sps)
	v.setParam(nal.PPS, pps)
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
func (v *videoTrack) ready() bool {
	return v.sps != nil && v.pps != nil && (v.vps != nil || v.codec != media.CodecH265)
}

// params returns the track's parameters.
func (v *videoTrack) params() media.Params {
	return media.Params{VPS: v.vps, SPS: v.sps, PPS: v.pps, Width: v.width, Height: v.height}
}

// setParam keeps a private copy of a parameter set when it changed; empty ones are ignored.
func (v *videoTrack) setParam(k nal.Kind, n []byte) {
	if len(n) == 0 {
		return
	}
	switch k {
	case nal.VPS:
		if !bytes.Equal(v.vps, n) {
			v.vps = bytes.Clone(n)
		}
	case nal.SPS:
		if !bytes.Equal(v.sps, n) {
			v.sps = bytes.Clone(n)
			v.width, v.height = nal.VideoSize(v.codec, n)
		}
	case nal.PPS:
		if !bytes.Equal(v.pps, n) {
			v.pps = bytes.Clone(n)
		}
	}
}

// unit turns the NAL units of one access unit, presented at pts (90 kHz), into a normalised
// unit with its own copy of the data. It fails with errNotReady before the first key frame.
func (v *videoTrack) unit(nalus [][]byte, pts int64) (*media.AccessUnit, error) {
	var key, hasVPS, hasSPS, hasPPS bool
	size, count := 0, 0
	for _, n := range nalus {
		if len(n) == 0 {
			continue
		}
		switch k := nal.Classify(v.codec, n); k {
		case nal.AUD:
			continue
		case nal.VPS:
			hasVPS = true
			v.setParam(k, n)
		case nal.SPS:
			hasSPS = true
			v.setParam(k, n)
		case nal.PPS:
			hasPPS = true
			v.setParam(k, n)
		case nal.Key:
			key = true
		}
		size += len(n)
		count++
	}
	if count == 0 {
		return nil, errNotReady
	}
	if !v.sawKey {
		if !key || !v.ready() {
			return nil, errNotReady
		}
		v.sawKey = true
	}

	var prefix [3][]byte
	np := 0
	if key {
		if v.codec == media.CodecH265 && !hasVPS {
			prefix[np], np = v.vps, np+1
		}
		if !hasSPS {
			prefix[np], np = v.sps, np+1
		}
		if !hasPPS {
			prefix[np], np = v.pps, np+1
		}
	}
	payload := make([][]byte, 0, np+count)
	payload = append(payload, prefix[:np]...)
	data := make([]byte, size)
	off := 0
	for _, n := range nalus {
		if len(n) == 0 || nal.Classify(v.codec, n) == nal.AUD {
			continue
		}
		k := copy(data[off:], n)
		payload = append(payload, data[off:off+k:off+k])
		off += k
	}

	dts, err := v.extractDTS(payload, pts)
	if err != nil {
		// The picture order cannot be read: present the unit as is, and start the extractor
		// over; it picks up again at the next key frame, whose parameter sets it needs.
		v.dtsErrs++
		v.resetDTS()
		dts = pts
	}
	// A step back of more than 10 s is a reset of the source's clock, not reordering.
	pts, dts = v.mono.fix(pts, dts, 10*90000)
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
