package fmp4

import (
	"fmt"

	"github.com/Eyevinn/mp4ff/bits"
	"github.com/Eyevinn/mp4ff/mp4"

	"github.com/sluicemedia/sluice/internal/media"
)

// InitSegment returns a CMAF init segment (ftyp + moov) with one trak per track, in the
// order given. A single-track init for DASH is InitSegment(tracks[i:i+1]): the track keeps
// its ID. It fails with ErrUnsupportedCodec or ErrMissingParams (wrapped) for a track it
// cannot describe. Its durations are zero: a live presentation has none.
func InitSegment(tracks []media.Track) (b []byte, err error) {
	return encodeInit(tracks, false)
}

// encodeInit builds and encodes an init segment; file gives mvhd, tkhd and mdhd 64-bit
// duration fields (version 1) and adds a mehd to mvex (see FileInitSegment).
func encodeInit(tracks []media.Track, file bool) (b []byte, err error) {
	// mp4ff's SPS parsers run on parameter sets that came from the network.
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("fmp4: init segment: %w: %v", ErrMissingParams, r)
		}
	}()
	if len(tracks) == 0 {
		return nil, fmt.Errorf("fmp4: init segment without tracks: %w", ErrMissingParams)
	}
	init := mp4.NewMP4Init()
	init.AddChild(mp4.NewFtyp("iso6", 0, []string{"iso6", "cmfc", "mp41", "dash"}))
	moov := mp4.NewMoovBox()
	init.AddChild(moov)
	mvhd := mp4.CreateMvhd()
	moov.AddChild(mvhd)
	mvex := mp4.NewMvexBox()
	moov.AddChild(mvex)
	if file {
		mvhd.Version = 1
		mvex.AddChild(&mp4.MehdBox{Version: 1}) // mehd comes before the trex boxes
	}
	for _, t := range tracks {
		kind := "audio"
		if t.Codec.IsVideo() {
			kind = "video"
		}
		if t.ClockRate <= 0 {
			return nil, fmt.Errorf("fmp4: track %d (%s): clock rate %d: %w", t.ID, t.Codec, t.ClockRate, ErrMissingParams)
		}
		id := TrackID(t)
		trak := mp4.CreateEmptyTrak(id, uint32(t.ClockRate), kind, "und")
		if err := setSampleEntry(trak, t); err != nil {
			return nil, fmt.Errorf("fmp4: track %d (%s): %w", t.ID, t.Codec, err)
		}
		if file {
			trak.Tkhd.Version, trak.Mdia.Mdhd.Version = 1, 1
		}
		moov.AddChild(trak)
		mvex.AddChild(mp4.CreateTrex(id))
		if id+1 > moov.Mvhd.NextTrackID {
			moov.Mvhd.NextTrackID = id + 1
		}
	}
	sw := bits.NewFixedSliceWriter(int(init.Size()))
	if err := init.EncodeSW(sw); err != nil {
		return nil, fmt.Errorf("fmp4: encode init segment: %w", err)
	}
	return sw.Bytes(), nil
}

// setSampleEntry adds the codec's sample entry (with its configuration box) to trak's stsd.
func setSampleEntry(trak *mp4.TrakBox, t media.Track) error {
	p := t.Params
	switch t.Codec {
	case media.CodecH264:
		if len(p.SPS) < 4 || len(p.PPS) == 0 {
			return ErrMissingParams
		}
		if err := trak.SetAVCDescriptor("avc1", [][]byte{p.SPS}, [][]byte{p.PPS}, true); err != nil {
			return err
		}
		return setAVCConfig(trak, p.SPS, p.PPS)
	case media.CodecH265:
		if len(p.VPS) == 0 || len(p.SPS) == 0 || len(p.PPS) == 0 {
			return ErrMissingParams
		}
		return trak.SetHEVCDescriptor("hvc1", [][]byte{p.VPS}, [][]byte{p.SPS}, [][]byte{p.PPS}, nil, true)
	case media.CodecAAC:
		if len(p.AudioConfig) < 2 {
			return ErrMissingParams
		}
		esds := mp4.CreateEsdsBox(p.AudioConfig)
		addAudioEntry(trak, "mp4a", t, esds)
		return nil
	case media.CodecMP3:
		// ISO/IEC 14496-1 objectTypeIndication: 0x6B MPEG-1 audio, 0x69 MPEG-2 (the half
		// sample rates); no decoder-specific info.
		esds := mp4.CreateEsdsBox(nil)
		esds.DecConfigDescriptor.ObjectType = 0x6b
		if t.ClockRate < 32000 {
			esds.DecConfigDescriptor.ObjectType = 0x69
		}
		esds.DecConfigDescriptor.DecSpecificInfo = nil
		addAudioEntry(trak, "mp4a", t, esds)
		return nil
	case media.CodecOpus:
		addAudioEntry(trak, "Opus", t, opusConfig(t))
		return nil
	}
	return ErrUnsupportedCodec
}

// addAudioEntry adds an audio sample entry; its 16-bit sample rate field holds 0 for rates
// above 65535 (the configuration box has the real rate).
func addAudioEntry(trak *mp4.TrakBox, name string, t media.Track, cfg mp4.Box) {
	rate := t.ClockRate
	if rate > 0xffff {
		rate = 0
	}
	trak.Mdia.Minf.Stbl.Stsd.AddChild(mp4.CreateAudioSampleEntryBox(name, uint16(channels(t)), 16, uint16(rate), cfg))
}

// channels returns the track's channel count, 2 when unknown.
func channels(t media.Track) int {
	if t.Params.Channels > 0 {
		return t.Params.Channels
	}
	return 2
}

// opusConfig returns the dOps box (Opus in ISOBMFF, section 4.3.2). MPEG-TS carries no
// pre-skip, so it is 0. More than two channels use mapping family 1 with the Vorbis order.
func opusConfig(t media.Track) *mp4.DopsBox {
	ch := min(channels(t), 8)
	d := &mp4.DopsBox{OutputChannelCount: byte(ch), InputSampleRate: 48000}
	if ch > 2 {
		d.ChannelMappingFamily = 1
		d.StreamCount = opusStreams[ch-1][0]
		d.CoupledCount = opusStreams[ch-1][1]
		d.ChannelMapping = append([]byte(nil), opusMapping[ch-1]...)
	}
	return d
}

// Opus streams, coupled streams and channel mapping per channel count, for mapping family 1
// (RFC 7845 section 5.1.1.2).
var (
	opusStreams = [8][2]byte{{1, 0}, {1, 1}, {2, 1}, {2, 2}, {3, 2}, {4, 2}, {4, 3}, {5, 3}}
	opusMapping = [8][]byte{
		{0}, {0, 1}, {0, 2, 1}, {0, 1, 2, 3}, {0, 4, 1, 2, 3},
		{0, 4, 1, 2, 3, 5}, {0, 4, 1, 2, 3, 5, 6}, {0, 6, 1, 2, 3, 4, 5, 7},
	}
)
