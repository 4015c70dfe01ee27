package flv

import (
	"fmt"
	"slices"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/nal"
)

// Probe limits: without hints, the tracks are announced once both a video and an audio
// configuration are known, or once one is and this much media went by.
const (
	probeWindowMs = 1500
	probeMaxUnits = 1024
	probeMaxBytes = 8 << 20
)

// Depacketizer turns the tags of an RTMP stream or an FLV file into tracks and access units:
// video DTS is the tag time rescaled to 90 kHz and PTS adds the composition time; audio is
// timed in its sample rate, smoothed over the millisecond rounding of FLV. Parameter sets are
// prepended to key frames that lack them and units before the first key frame are dropped.
// A Depacketizer is not safe for concurrent use.
type Depacketizer struct {
	video    videoState
	audio    audioState
	expected bool
	wantV    bool
	wantA    bool
	clock    msClock

	tracks       []media.Track
	final        bool
	probing      bool
	probeStart   int64
	pending      []pendingUnit
	pendingBytes int
	queue        []*media.AccessUnit
	head         int
	vt           VideoTag
	at           AudioTag
	dropped      int64
}

type videoState struct {
	codec      media.Codec
	fix        *nal.Fixer // parameter sets and the key-frame gate; nil before the first tag
	lengthSize int
	id         int
}

type audioState struct {
	codec   media.Codec
	params  media.Params
	rate    int
	next    int64
	hasNext bool
	id      int
}

// NewDepacketizer returns a Depacketizer with no tracks known yet.
func NewDepacketizer() *Depacketizer {
	return &Depacketizer{video: videoState{id: -1}, audio: audioState{id: -1}}
}

// Expect tells which kinds of track the stream carries, from the FLV header flags or the
// onMetaData of RTMP, so that the tracks are announced as soon as those are configured.
func (d *Depacketizer) Expect(video, audio bool) {
	d.expected, d.wantV, d.wantA = true, video, audio
}

// Tracks returns the tracks once known, nil before: video first, then audio.
func (d *Depacketizer) Tracks() []media.Track {
	if !d.final {
		return nil
	}
	return d.tracks
}

// Next returns the next access unit, or nil when none is ready. Units are shared read-only.
func (d *Depacketizer) Next() *media.AccessUnit {
	if d.head == len(d.queue) {
		d.queue, d.head = d.queue[:0], 0
		return nil
	}
	au := d.queue[d.head]
	d.queue[d.head] = nil
	d.head++
	return au
}

// Dropped returns how many units were dropped: before a decoder configuration or a key frame.
func (d *Depacketizer) Dropped() int64 { return d.dropped }

// Push takes one tag. The units it completes are returned by Next, which the caller drains
// (until nil) after each Push. Its body is retained by the units and the tracks: the caller
// must not reuse it. An error concerns this tag only
// (ErrMalformed, ErrUnsupportedCodec), except ErrCodecChanged: the caller starts over.
func (d *Depacketizer) Push(tag Tag) error {
	var err error
	switch tag.Type {
	case TagVideo:
		err = d.pushVideo(tag)
	case TagAudio:
		err = d.pushAudio(tag)
	default:
		return nil // script data: onMetaData is the caller's (see Expect)
	}
	if !d.final {
		d.checkReady(d.clock.ext)
	}
	return err
}

func (d *Depacketizer) pushVideo(tag Tag) error {
	v := &d.video
	if err := ParseVideoTag(tag.Body, v.lengthSize, &d.vt); err != nil {
		return err
	}
	ms := d.clock.unwrap(tag.Timestamp)
	t := &d.vt
	if t.Type != PacketSequenceHeader && t.Type != PacketCodedFrames {
		return nil
	}
	if v.codec != media.CodecUnknown && v.codec != t.Codec {
		if d.final && v.id >= 0 {
			return fmt.Errorf("flv: video codec changed from %s to %s: %w", v.codec, t.Codec, ErrCodecChanged)
		}
		*v = videoState{id: -1}
		d.dropPending(&v.id)
	}
	v.codec = t.Codec
	if v.fix == nil {
		v.fix = nal.NewFixer(v.codec, nil, nil, nil)
	}
	if t.Type == PacketSequenceHeader {
		v.fix.SetParams(t.Params.VPS, t.Params.SPS, t.Params.PPS)
		v.lengthSize = t.LengthSize
		return nil
	}
	au, ok := v.unit(t)
	if !ok {
		d.dropped++
		return nil
	}
	au.DTS = media.Rescale(ms, 1000, 90000)
	au.PTS = au.DTS + int64(t.CompositionTime)*90
	d.emit(au, &d.video.id)
	return nil
}

// unit builds the access unit of coded frames through the track's nal.Fixer (AUDs dropped,
// in-band parameter sets learned, missing ones put in front of key frames; a key frame is one
// only with its parameter sets known); false for a tag with no frame. Units before the first
// key frame go on: the stream's publisher drops them. The units share the tag's bytes.
func (v *videoState) unit(t *VideoTag) (*media.AccessUnit, bool) {
	units, key, _ := v.fix.Fix(t.NALUs)
	if len(units) == 0 {
		return nil, false
	}
	if len(t.NALUs) > 0 && &units[0] == &t.NALUs[0] {
		units = slices.Clone(units) // t.NALUs is reused by the next tag
	}
	return &media.AccessUnit{Key: key, Payload: units}, true
}

// ready tells whether the decoder configuration is known.
func (v *videoState) ready() bool { return v.fix != nil && v.fix.Ready() }

// params returns the video track's parameters.
func (v *videoState) params() media.Params {
	if v.fix == nil {
		return media.Params{}
	}
	return v.fix.Params()
}

func (d *Depacketizer) pushAudio(tag Tag) error {
	a := &d.audio
	if err := ParseAudioTag(tag.Body, &d.at); err != nil {
		return err
	}
	ms := d.clock.unwrap(tag.Timestamp)
	t := &d.at
	if t.Type != PacketSequenceHeader && t.Type != PacketCodedFrames {
		return nil
	}
	if a.codec != media.CodecUnknown && a.codec != t.Codec {
		if d.final && a.id >= 0 {
			return fmt.Errorf("flv: audio codec changed from %s to %s: %w", a.codec, t.Codec, ErrCodecChanged)
		}
		*a = audioState{id: -1}
		d.dropPending(&a.id)
	}
	if t.Type == PacketSequenceHeader || a.rate == 0 && t.Codec != media.CodecAAC {
		// AAC needs its sequence header; MP3 and Opus frames describe themselves.
		if !d.final || a.rate == 0 || a.rate == t.Params.SampleRate {
			a.codec, a.params, a.rate = t.Codec, t.Params, t.Params.SampleRate
		}
		if t.Type == PacketSequenceHeader {
			return nil
		}
	}
	if a.rate == 0 || len(t.Frame) == 0 {
		d.dropped++
		return nil
	}
	// FLV times are milliseconds; a frame within 2 ms of where the previous one ended is
	// placed there, so sample-exact timestamps survive the rounding.
	ts := media.Rescale(ms, 1000, a.rate)
	if tol := int64(a.rate/500 + 1); a.hasNext && ts-a.next <= tol && a.next-ts <= tol {
		ts = a.next
	}
	a.next, a.hasNext = ts+int64(t.Samples), t.Samples > 0
	d.emit(&media.AccessUnit{PTS: ts, DTS: ts, Key: true, Payload: [][]byte{t.Frame}}, &d.audio.id)
	return nil
}
