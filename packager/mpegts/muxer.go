package mpegts

import (
	"fmt"
	"io"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/mpeg4audio"

	"github.com/sluicemedia/sluice/internal/media"
)

const (
	// tablePeriod is the longest gap between two PAT/PMT pairs: 100 ms (ETSI TR 101 290).
	tablePeriod = clock90k / 10
	// pcrDelay puts the PCR before the DTS of the PCR track, leaving decoders room for
	// interleaving skew between tracks; 700 ms is ffmpeg's default mux delay.
	pcrDelay = clock90k * 7 / 10
)

// Muxer writes tracks and access units as an MPEG-TS stream: PAT and PMT before the first
// unit, every video key frame and at least every 100 ms; a PCR on each PES of the video track
// (the first track without video); AUDs before H.264/H.265 units; ADTS headers on AAC. Each
// access unit becomes whole 188-byte packets, written with one Write call, so a caller can
// cut the output into 7×188-byte datagrams. A Muxer is not safe for concurrent use.
type Muxer struct {
	w          io.Writer
	tracks     []muxTrack
	pcrTrack   int
	pat, pmt   [PacketSize]byte
	patCC      uint8
	pmtCC      uint8
	tablesDone bool
	tablesAt   int64
	es         []byte
	buf        []byte
}

type muxTrack struct {
	media.Track
	pid        uint16
	streamType uint8
	streamID   uint8
	cc         uint8
	// AAC: the ADTS header fields of every frame.
	aacObject, aacRate, aacChannels int
}

// NewMuxer returns a Muxer writing the given tracks to w. Nothing is written until the first
// access unit. It fails for codecs MPEG-TS cannot carry here and for incomplete audio params.
func NewMuxer(w io.Writer, tracks []media.Track) (*Muxer, error) {
	if len(tracks) == 0 {
		return nil, fmt.Errorf("mpegts: muxer needs at least one track")
	}
	m := &Muxer{w: w, pcrTrack: -1}
	for i, trk := range tracks {
		t := muxTrack{Track: trk, pid: uint16(muxFirstPID + i)}
		if err := t.setup(); err != nil {
			return nil, err
		}
		if m.pcrTrack < 0 && trk.Codec.IsVideo() {
			m.pcrTrack = i
		}
		m.tracks = append(m.tracks, t)
	}
	if m.pcrTrack < 0 {
		m.pcrTrack = 0
	}
	var err error
	if m.pat, err = buildPAT(); err != nil {
		return nil, err
	}
	if m.pmt, err = buildPMT(m.tracks, m.tracks[m.pcrTrack].pid); err != nil {
		return nil, fmt.Errorf("mpegts: %d tracks: %w", len(tracks), err)
	}
	return m, nil
}

func (t *muxTrack) setup() error {
	if t.ClockRate <= 0 {
		return fmt.Errorf("mpegts: track %d (%s): clock rate %d", t.ID, t.Codec, t.ClockRate)
	}
	switch t.Codec {
	case media.CodecH264:
		t.streamType, t.streamID = streamTypeH264, streamIDVideo
	case media.CodecH265:
		t.streamType, t.streamID = streamTypeH265, streamIDVideo
	case media.CodecAAC:
		t.streamType, t.streamID = streamTypeAAC, streamIDAudio
		return t.setupAAC()
	case media.CodecMP3:
		t.streamType, t.streamID = streamTypeMPEG1Audio, streamIDAudio
		if r := t.Params.SampleRate; r != 0 && r < 32000 {
			t.streamType = streamTypeMPEG2Audio // the lower sample rates of MPEG-2 (LSF)
		}
	case media.CodecOpus:
		t.streamType, t.streamID = streamTypePrivate, streamIDPrivate1
		if c := t.Params.Channels; c < 1 || c > 8 {
			return fmt.Errorf("mpegts: track %d (Opus): %d channels, need 1 to 8", t.ID, c)
		}
	default:
		return fmt.Errorf("mpegts: track %d: codec %s: %w", t.ID, t.Codec, ErrUnsupportedCodec)
	}
	return nil
}

// setupAAC takes the ADTS fields from the AudioSpecificConfig (the core AAC layer for HE-AAC),
// or from the sample rate and channels when there is none.
func (t *muxTrack) setupAAC() error {
	obj, rate, ch := int(mpeg4audio.ObjectTypeAACLC), t.Params.SampleRate, t.Params.Channels
	if len(t.Params.AudioConfig) > 0 {
		var asc mpeg4audio.AudioSpecificConfig
		if err := asc.Unmarshal(t.Params.AudioConfig); err != nil {
			return fmt.Errorf("mpegts: track %d (AAC): AudioSpecificConfig %x: %w", t.ID, t.Params.AudioConfig, err)
		}
		obj, rate, ch = int(asc.Type), asc.SampleRate, asc.ChannelCount
	}
	if rate == 0 {
		rate = t.ClockRate
	}
	t.aacObject, t.aacRate = obj, -1
	for i, r := range aacSampleRates {
		if r == rate {
			t.aacRate = i
		}
	}
	switch {
	case t.aacRate < 0:
		return fmt.Errorf("mpegts: track %d (AAC): sample rate %d has no ADTS index", t.ID, rate)
	case obj < 1 || obj > 4:
		return fmt.Errorf("mpegts: track %d (AAC): object type %d cannot be written as ADTS", t.ID, obj)
	case ch >= 1 && ch <= 6:
		t.aacChannels = ch
	case ch == 8:
		t.aacChannels = 7
	default:
		return fmt.Errorf("mpegts: track %d (AAC): %d channels cannot be written as ADTS", t.ID, ch)
	}
	return nil
}

// WriteAccessUnit writes one access unit, with tables when due, in one Write call.
func (m *Muxer) WriteAccessUnit(au *media.AccessUnit) error {
	var err error
	if m.buf, err = m.AppendAccessUnit(m.buf[:0], au); err != nil {
		return err
	}
	if _, err = m.w.Write(m.buf); err != nil {
		return fmt.Errorf("mpegts: write %d bytes: %w", len(m.buf), err)
	}
	return nil
}

// AppendAccessUnit appends the packets of one access unit (and tables when due) to dst and
// returns it, without writing: a whole number of 188-byte packets, for callers that packetize
// the output themselves.
func (m *Muxer) AppendAccessUnit(dst []byte, au *media.AccessUnit) ([]byte, error) {
	ti := -1
	for i := range m.tracks {
		if m.tracks[i].ID == au.Track {
			ti = i
			break
		}
	}
	if ti < 0 {
		return dst, fmt.Errorf("mpegts: access unit of track %d: %w", au.Track, ErrUnknownTrack)
	}
	t := &m.tracks[ti]
	var err error
	if m.es, err = appendES(m.es[:0], t, au); err != nil {
		return dst, err
	}
	pts := media.Rescale(au.PTS, t.ClockRate, clock90k) & tsMask
	dts := media.Rescale(au.DTS, t.ClockRate, clock90k) & tsMask
	if !m.tablesDone || au.Discontinuity || (ti == m.pcrTrack && au.Key && t.Codec.IsVideo()) ||
		dts < m.tablesAt || dts-m.tablesAt >= tablePeriod {
		dst = m.appendTables(dst)
		m.tablesDone, m.tablesAt = true, dts
	}
	var hdr [19]byte
	withDTS := t.Codec.IsVideo() && pts != dts
	h := appendPESHeader(hdr[:0], t.streamID, pts, dts, withDTS, len(m.es))
	af := afFields{discontinuity: au.Discontinuity, randomAccess: au.Key}
	if ti == m.pcrTrack {
		af.pcr, af.hasPCR = (dts-pcrDelay)&tsMask, true
	}
	return appendPES(dst, t, h, m.es, af), nil
}

func (m *Muxer) appendTables(dst []byte) []byte {
	m.pat[3] = 0x10 | m.patCC
	m.pmt[3] = 0x10 | m.pmtCC
	m.patCC, m.pmtCC = (m.patCC+1)&0x0f, (m.pmtCC+1)&0x0f
	dst = append(dst, m.pat[:]...)
	return append(dst, m.pmt[:]...)
}
