package fmp4

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
)

// FileInit is the init segment of a fragmented file (a recording) that states its duration
// where players look for it, once known: mvhd and mehd (the movie, ISO/IEC 14496-12 8.2.2
// and 8.8.2), and each track's tkhd (in the movie timescale) and mdhd (in its own). Each is a
// 64-bit field of a version 1 box, so that any duration fits in place: a file written as it
// goes has zeros there until it is finished, then 8 bytes each are patched in place.
type FileInit struct {
	// Data is ftyp + moov.
	Data   []byte
	fields []durationField
	movie  uint32   // the mvhd timescale
	ids    []uint32 // the traks' track IDs, in order
}

// durationField locates one duration in Data: of the movie (track -1) or of the trak at that
// index, in ticks of timescale.
type durationField struct {
	off       int
	track     int
	timescale uint32
}

// Patch is 8 bytes to write at Off in the init segment (and so in a file that starts with it).
type Patch struct {
	Off  int
	Data [8]byte
}

// FileInitSegment returns the init segment of a file of tracks (see FileInit), with its
// durations zero.
func FileInitSegment(tracks []media.Track) (*FileInit, error) {
	b, err := encodeInit(tracks, true)
	if err != nil {
		return nil, err
	}
	fi, err := ParseFileInit(b)
	if err != nil {
		return nil, err
	}
	if len(fi.ids) != len(tracks) {
		return nil, fmt.Errorf("fmp4: file init segment: %d traks for %d tracks", len(fi.ids), len(tracks))
	}
	return fi, nil
}

// ParseFileInit finds the duration fields of a file's init segment, b being the bytes from
// the start of the file to the end of its moov at least (Data is b). It fails for a file
// without them: one that FileInitSegment did not write.
func ParseFileInit(b []byte) (*FileInit, error) {
	fi := &FileInit{Data: b}
	if err := fi.locate(); err != nil {
		return nil, err
	}
	return fi, nil
}

// TrackIDs returns the MP4 track IDs of the traks, in their order: the order of the
// durations given to Patches.
func (fi *FileInit) TrackIDs() []uint32 { return fi.ids }

// Patches returns the writes that state the durations: d[i] is the duration of the i-th trak
// (the i-th track given to FileInitSegment), from the file's time zero to the end of its last
// sample; the movie's is the longest.
func (fi *FileInit) Patches(d []time.Duration) []Patch {
	var movie time.Duration
	for _, v := range d {
		movie = max(movie, v)
	}
	out := make([]Patch, 0, len(fi.fields))
	for _, f := range fi.fields {
		v := movie
		if f.track >= 0 {
			v = 0
			if f.track < len(d) {
				v = d[f.track]
			}
		}
		p := Patch{Off: f.off}
		binary.BigEndian.PutUint64(p.Data[:], uint64(media.Rescale(int64(max(v, 0)), int(time.Second), int(f.timescale))))
		out = append(out, p)
	}
	return out
}

// Apply writes the durations (see Patches) into b, a copy of Data or a file that starts with it.
func (fi *FileInit) Apply(b []byte, d []time.Duration) {
	for _, p := range fi.Patches(d) {
		copy(b[p.Off:p.Off+8], p.Data[:])
	}
}

// Offsets of the 64-bit duration in the bodies of version 1 boxes, after version and flags:
// mvhd and mdhd: creation and modification times, timescale; tkhd: the times, track_ID and a
// reserved word; mehd: nothing.
const (
	mvhdDuration = 4 + 8 + 8 + 4
	mdhdDuration = 4 + 8 + 8 + 4
	tkhdDuration = 4 + 8 + 8 + 4 + 4
	tkhdTrackID  = 4 + 8 + 8
	mehdDuration = 4
)

// locate finds the duration fields in Data.
func (fi *FileInit) locate() error {
	moov, at, ok := findBox(fi.Data, 0, "moov")
	if !ok {
		return fmt.Errorf("fmp4: file init segment without moov")
	}
	var bad []string
	add := func(body []byte, at, off, track int, timescale uint32, name string) {
		if len(body) < off+8 || body[0] != 1 {
			bad = append(bad, name)
			return
		}
		fi.fields = append(fi.fields, durationField{off: at + off, track: track, timescale: timescale})
	}
	mehd := false
	eachBox(moov, at, func(typ string, body []byte, at int) {
		switch typ {
		case "mvhd":
			if len(body) >= mvhdDuration {
				fi.movie = binary.BigEndian.Uint32(body[mvhdDuration-4:])
			}
			add(body, at, mvhdDuration, -1, fi.movie, typ)
		case "mvex":
			var b []byte
			b, at, mehd = findBox(body, at, "mehd")
			add(b, at, mehdDuration, -1, 0, "mehd") // in the movie timescale, below
		case "trak":
			track := len(fi.ids)
			tkhd, tat, _ := findBox(body, at, "tkhd")
			if len(tkhd) < tkhdTrackID+4 {
				bad = append(bad, "tkhd")
				return
			}
			fi.ids = append(fi.ids, binary.BigEndian.Uint32(tkhd[tkhdTrackID:]))
			add(tkhd, tat, tkhdDuration, track, 0, "tkhd") // in the movie timescale, below
			mdia, mat, _ := findBox(body, at, "mdia")
			mdhd, dat, _ := findBox(mdia, mat, "mdhd")
			var scale uint32
			if len(mdhd) >= mdhdDuration {
				scale = binary.BigEndian.Uint32(mdhd[mdhdDuration-4:])
			}
			if scale == 0 {
				bad = append(bad, "mdhd timescale")
				return
			}
			add(mdhd, dat, mdhdDuration, track, scale, "mdhd")
		}
	})
	for i := range fi.fields {
		if fi.fields[i].timescale == 0 {
			fi.fields[i].timescale = fi.movie
		}
	}
	if len(bad) > 0 || !mehd || fi.movie == 0 || len(fi.ids) == 0 {
		return fmt.Errorf("fmp4: init segment without 64-bit duration fields (%v)", bad)
	}
	return nil
}

// eachBox calls fn with the type, body and body offset (at is b's own offset) of each box in
// b, a sequence of boxes with 32-bit sizes (as encoded here).
func eachBox(b []byte, at int, fn func(typ string, body []byte, at int)) {
	for off := 0; off+8 <= len(b); {
		n := int(binary.BigEndian.Uint32(b[off:]))
		if n < 8 || off+n > len(b) {
			return
		}
		fn(string(b[off+4:off+8]), b[off+8:off+n], at+off+8)
		off += n
	}
}

// findBox returns the body of the first box of type typ in b, and its offset.
func findBox(b []byte, at int, typ string) (body []byte, bodyAt int, ok bool) {
	eachBox(b, at, func(t string, bd []byte, a int) {
		if !ok && t == typ {
			body, bodyAt, ok = bd, a, true
		}
	})
	return body, bodyAt, ok
}
