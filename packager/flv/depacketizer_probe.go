package flv

import "github.com/sluicemedia/sluice/internal/media"

// pendingUnit waits for the tracks to be known; id points at its track's ID.
type pendingUnit struct {
	au *media.AccessUnit
	id *int
}

// emit queues a unit of a track, or keeps it until the tracks are known. *id is the track
// ID, -1 while unknown or when the track was left out.
func (d *Depacketizer) emit(au *media.AccessUnit, id *int) {
	if d.final {
		if *id >= 0 {
			au.Track = *id
			d.queue = append(d.queue, au)
		}
		return
	}
	d.pending = append(d.pending, pendingUnit{au: au, id: id})
	d.pendingBytes += au.Size()
}

// checkReady announces the tracks when the expected kinds (both without Expect) are
// configured, or when one is and the probe window is spent.
func (d *Depacketizer) checkReady(ms int64) {
	v, a := d.video.codec != media.CodecUnknown && d.video.ready(), d.audio.rate != 0
	if !v && !a {
		return
	}
	if !d.probing {
		d.probing, d.probeStart = true, ms
	}
	done := v && a
	if d.expected {
		done = (v || !d.wantV) && (a || !d.wantA)
	}
	if done || ms-d.probeStart > probeWindowMs || len(d.pending) > probeMaxUnits || d.pendingBytes > probeMaxBytes {
		d.finalize(v, a)
	}
}

func (d *Depacketizer) finalize(v, a bool) {
	d.final = true
	if v {
		d.video.id = len(d.tracks)
		d.tracks = append(d.tracks, media.Track{ID: d.video.id, Codec: d.video.codec, ClockRate: 90000, Params: d.video.params()})
	}
	if a {
		d.audio.id = len(d.tracks)
		d.tracks = append(d.tracks, media.Track{ID: d.audio.id, Codec: d.audio.codec, ClockRate: d.audio.rate, Params: d.audio.params})
	}
	for _, p := range d.pending {
		if *p.id >= 0 {
			p.au.Track = *p.id
			d.queue = append(d.queue, p.au)
		}
	}
	d.pending, d.pendingBytes = nil, 0
}

// dropPending forgets the waiting units of one track, whose codec changed while probing.
func (d *Depacketizer) dropPending(id *int) {
	kept := d.pending[:0]
	d.pendingBytes = 0
	for _, p := range d.pending {
		if p.id != id {
			kept = append(kept, p)
			d.pendingBytes += p.au.Size()
		}
	}
	clear(d.pending[len(kept):])
	d.pending = kept
}
