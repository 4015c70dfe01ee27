package record

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/avi"
	"github.com/sluicemedia/sluice/packager/fmp4"
)

// FragmentDuration is how much media an MP4 fragment holds: what a crash can lose at most.
const FragmentDuration = time.Second

// MP4 writes a fragmented MP4 (or QuickTime) file: the init segment, then a moof+mdat about
// every FragmentDuration, each in one Write; Close writes the last fragment and an mfra index
// so that players can seek, then states the file's duration in the init segment's mvhd, mehd,
// tkhd and mdhd (fixed-size fields written as zeros at the start, patched in place).
type MP4 struct {
	ws    io.WriteSeeker
	out   *counter
	init  *fmp4.FileInit
	ends  []int64 // by track: the end of its last sample, in its clock (file time zero at 0)
	frag  *fmp4.Fragmenter
	clk   clock
	video int // index of the video track, -1 without video
	seq   uint32
	open  time.Duration // file time of the open fragment's first unit
	index fragIndex
	cuts  int64         // fragments cut early at MaxFragmentBytes
	heard []bool        // by track: a unit written
	lead  time.Duration // how much later than its decode time the first unit is presented
}

// NewMP4 writes the init segment of tracks to w, which must be at the start of the file;
// quicktime gives the file the "qt  " brand.
func NewMP4(w io.WriteSeeker, tracks []media.Track, quicktime bool) (*MP4, error) {
	init, err := fmp4.FileInitSegment(tracks)
	if err != nil {
		return nil, err
	}
	if quicktime {
		setMajorBrand(init.Data, "qt  ")
	}
	frag, err := fmp4.NewFragmenter(tracks)
	if err != nil {
		return nil, err
	}
	m := &MP4{ws: w, out: &counter{w: w}, init: init, ends: make([]int64, len(tracks)), frag: frag,
		clk: clock{tracks: tracks}, video: -1, heard: make([]bool, len(tracks))}
	for i, t := range tracks {
		if t.Codec.IsVideo() && m.video < 0 {
			m.video = i
		}
	}
	if _, err := m.out.Write(init.Data); err != nil {
		return nil, fmt.Errorf("record: write init segment: %w", err)
	}
	return m, nil
}

// setMajorBrand rewrites the major brand of the ftyp box that starts b.
func setMajorBrand(b []byte, brand string) {
	if len(b) >= 12 && string(b[4:8]) == "ftyp" {
		copy(b[8:12], brand)
	}
}

// WriteUnit implements Writer. A fragment is cut before a video unit (or, without video, any
// unit) once the open one holds FragmentDuration, and before any unit that would take it past
// MaxFragmentBytes.
func (m *MP4) WriteUnit(au *media.AccessUnit) error {
	first := !m.clk.based
	if !m.clk.admit(au) {
		return nil
	}
	if first {
		m.frag.SetShift(-m.clk.base)
		m.lead = max(m.clk.at(&media.AccessUnit{Track: au.Track, DTS: au.PTS})-m.clk.base, 0)
	}
	t := m.clk.at(au) - m.clk.base
	if au.Track >= 0 && au.Track < len(m.heard) && !m.heard[au.Track] {
		m.heard[au.Track] = true
		if err := m.padAudio(au, t); err != nil {
			return err
		}
	}
	cut := t-m.open >= FragmentDuration && (m.video < 0 || au.Track == m.video)
	full := m.frag.Size()+au.Size() > MaxFragmentBytes
	if m.frag.Samples() > 0 && (cut || full) {
		if !cut {
			m.cuts++
		}
		if err := m.flush(au); err != nil {
			return err
		}
	}
	if m.frag.Samples() == 0 {
		m.open = t
	}
	return m.frag.Add(au)
}

// maxAudioPad is the longest silence padAudio writes before a late audio track: an encoder's
// audio starts within seconds of its video; a track that comes minutes later would put
// thousands of frames in one fragment.
const maxAudioPad = 10 * time.Second

// padAudio fills the start of an audio track whose first unit au comes t after the file's
// start with silent frames (AAC and MP3; avi.SilentFrame), from where the first unit is
// presented (a video key frame shown after its decode time with B-frames: audio from before
// it would start the file earlier) to where au begins. Without them the track's first
// fragment starts at t with nothing before it, and ffmpeg counts the track's duration from
// zero on top of that start: a file whose audio began 2 s late read 2 s too long.
func (m *MP4) padAudio(au *media.AccessUnit, t time.Duration) error {
	trk := m.clk.tracks[au.Track]
	if trk.Codec.IsVideo() || len(au.Payload) == 0 || trk.ClockRate <= 0 {
		return nil
	}
	if t-m.lead > maxAudioPad {
		return nil // a track that joins that late is left to start late
	}
	frame, samples, rate := avi.SilentFrame(trk, au.Payload[0])
	if frame == nil || samples <= 0 || rate <= 0 {
		return nil
	}
	n := int64(t-m.lead) * int64(rate) / (int64(samples) * int64(time.Second)) // whole frames that fit
	for ; n > 0; n-- {
		dts := au.DTS - media.Rescale(n*int64(samples), rate, trk.ClockRate)
		if m.clk.at(&media.AccessUnit{Track: au.Track, DTS: dts}) >= m.clk.base+m.lead {
			break
		}
	}
	for k := n; k > 0; k-- {
		dts := au.DTS - media.Rescale(k*int64(samples), rate, trk.ClockRate)
		if err := m.frag.Add(&media.AccessUnit{Track: au.Track, DTS: dts, PTS: dts, Key: true, Payload: [][]byte{frame}}); err != nil {
			return err
		}
	}
	return nil
}

// flush writes the open fragment; next starts the following one (nil at the end).
func (m *MP4) flush(next *media.AccessUnit) error {
	m.seq++
	f, err := m.frag.Flush(m.seq, next)
	if err != nil || f == nil {
		return err
	}
	data := f.Data[boxSize(f.Data):] // a file has no styp between fragments
	moofAt := m.out.n
	if _, err := m.out.Write(data); err != nil {
		return fmt.Errorf("record: write fragment %d: %w", m.seq, err)
	}
	for i, tf := range f.Tracks {
		if tf.Track >= 0 && tf.Track < len(m.ends) {
			m.ends[tf.Track] = max(m.ends[tf.Track], tf.BaseTime+tf.Duration)
		}
		if tf.Key || tf.Track != m.video {
			m.index.add(fmp4.TrackID(m.clk.tracks[tf.Track]), uint64(tf.BaseTime), uint64(moofAt), uint32(i+1))
		}
	}
	return nil
}

// boxSize returns the size of the box that starts b.
func boxSize(b []byte) int {
	if len(b) < 8 {
		return 0
	}
	return int(binary.BigEndian.Uint32(b))
}

// EarlyCuts counts the fragments cut at MaxFragmentBytes before their second ended.
func (m *MP4) EarlyCuts() int64 { return m.cuts }

// Duration implements Writer.
func (m *MP4) Duration() time.Duration { return m.clk.end }

// Size implements Writer.
func (m *MP4) Size() int64 { return m.out.n }

// Close implements Writer: the last fragment, the mfra index, then the durations. Each
// duration is 8 bytes overwritten in place in the init segment, whose other bytes never
// change: a crash during Close leaves zeros (no duration stated) or the right value in each,
// and Repair writes them again.
func (m *MP4) Close() error {
	if err := m.flush(nil); err != nil {
		return err
	}
	b, err := m.index.encode()
	if err != nil {
		return err
	}
	if _, err := m.out.Write(b); err != nil {
		return fmt.Errorf("record: write index: %w", err)
	}
	d := make([]time.Duration, len(m.ends))
	for i, end := range m.ends {
		d[i] = time.Duration(media.Rescale(end, m.clk.tracks[i].ClockRate, int(time.Second)))
	}
	return patchDurations(m.ws, m.init, d, m.out.n)
}

// patchDurations writes the durations into the init segment at the start of a file, then
// seeks back to end.
func patchDurations(ws io.WriteSeeker, init *fmp4.FileInit, d []time.Duration, end int64) error {
	for _, p := range init.Patches(d) {
		if _, err := ws.Seek(int64(p.Off), io.SeekStart); err != nil {
			return fmt.Errorf("record: seek to the duration at %d: %w", p.Off, err)
		}
		if _, err := ws.Write(p.Data[:]); err != nil {
			return fmt.Errorf("record: write the duration at %d: %w", p.Off, err)
		}
	}
	if _, err := ws.Seek(end, io.SeekStart); err != nil {
		return fmt.Errorf("record: seek to the end at %d: %w", end, err)
	}
	return nil
}
