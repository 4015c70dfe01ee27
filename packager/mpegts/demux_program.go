package mpegts

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sluicemedia/sluice/internal/media"
)

// onPAT follows the first program of the PAT.
func (d *Demuxer) onPAT(b []byte) {
	s, err := parseSection(b)
	if err != nil || s.tableID != tableIDPAT || !s.currentNext {
		d.stats.BadPackets++
		return
	}
	prog, pid, err := parsePAT(s)
	if err != nil || (prog == d.program && int(pid) == d.pmtPID) {
		return
	}
	if d.final {
		d.err = fmt.Errorf("mpegts: PAT now points at program %d on PID %d: %w", prog, pid, ErrProgramChanged)
		return
	}
	d.program, d.pmtPID = prog, int(pid)
	d.pmt = sectionAssembler{buf: d.pmt.buf[:0]}
	d.pmtSig = d.pmtSig[:0]
	d.streams = d.streams[:0]
	d.pesHeld = 0
	d.dropPending()
}

// onPMT sets up one elementary stream per supported entry of the PMT.
func (d *Demuxer) onPMT(b []byte) {
	s, err := parseSection(b)
	if err != nil || s.tableID != tableIDPMT || !s.currentNext || s.idExt != d.program {
		d.stats.BadPackets++
		return
	}
	if d.pmtTmp, err = parsePMT(s, d.pmtTmp[:0]); err != nil {
		d.stats.BadPackets++
		return
	}
	if len(d.pmtSig) > 0 && slices.Equal(d.pmtSig, d.pmtTmp) {
		return
	}
	if d.final {
		d.err = fmt.Errorf("mpegts: PMT of program %d now lists %d streams: %w", d.program, len(d.pmtTmp), ErrProgramChanged)
		return
	}
	d.pmtSig = append(d.pmtSig[:0], d.pmtTmp...)
	d.streams = d.streams[:0]
	d.pesHeld = 0
	d.dropPending()
	var skipped []string
	for _, es := range d.pmtSig {
		st := newESStream(es)
		if st != nil && len(d.streams) == maxStreams {
			continue
		}
		if st == nil {
			skipped = append(skipped, fmt.Sprintf("0x%02x on PID %d", es.streamType, es.pid))
			continue
		}
		d.streams = append(d.streams, st)
	}
	if len(d.streams) == 0 {
		d.err = fmt.Errorf("mpegts: program %d carries no supported stream (stream types %s): %w",
			d.program, strings.Join(skipped, ", "), ErrNoTracks)
	}
}

// codecOf maps a PMT entry to a codec; MPEG audio is checked to be layer 3 on its first frame.
func codecOf(es pmtStream) media.Codec {
	switch es.streamType {
	case streamTypeH264:
		return media.CodecH264
	case streamTypeH265:
		return media.CodecH265
	case streamTypeAAC:
		return media.CodecAAC
	case streamTypeMPEG1Audio, streamTypeMPEG2Audio:
		return media.CodecMP3
	case streamTypePrivate:
		if es.opus {
			return media.CodecOpus
		}
	}
	return media.CodecUnknown
}

// checkReady announces the tracks when every stream is ready, or when the probe budget is
// spent and at least one is; with none ready, what waited is dropped to bound memory.
func (d *Demuxer) checkReady() {
	all, some := true, false
	for _, s := range d.streams {
		switch {
		case s.ready:
			some = true
		case !s.disabled:
			all = false
		}
	}
	spent := d.pendingBytes > probeMaxBytes || len(d.pending) > probeMaxUnits ||
		(d.probing && d.probeLast-d.probeStart > probeMaxDuration)
	switch {
	case some && (all || spent):
		d.finalize()
	case spent:
		d.stats.DroppedUnits += int64(len(d.pending))
		d.dropPending()
	}
}

// finalize numbers the ready streams in PMT order and releases the units that waited.
func (d *Demuxer) finalize() {
	d.tracks = d.tracks[:0]
	for _, s := range d.streams {
		s.trackID = -1
		if s.ready {
			s.trackID = len(d.tracks)
			s.track.ID = s.trackID
			d.tracks = append(d.tracks, s.track)
		}
	}
	if len(d.tracks) == 0 {
		return
	}
	d.final = true
	for _, p := range d.pending {
		if p.s.trackID >= 0 {
			p.au.Track = p.s.trackID
			d.queue = append(d.queue, p.au)
		}
	}
	d.dropPending()
}

func (d *Demuxer) dropPending() {
	clear(d.pending)
	d.pending = d.pending[:0]
	d.pendingBytes = 0
	d.probing = false
}
