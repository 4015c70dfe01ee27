package flv

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
)

// The onMetaData of a file reserves room for its duration, size and key frame index, written
// as zeros at the start and filled in place once the file is finished: every value is an AMF0
// number (9 bytes) at a fixed place, the structure never changes, so a crash while it is
// rewritten leaves valid metadata. Players seek with the index ("keyframes" with "times" in
// seconds and "filepositions" in bytes, the convention ffmpeg, GStreamer and VLC read).
const (
	// IndexEntries is the room of the index: 4096 key frames (73 KiB of metadata), every key
	// frame at least IndexSpacing apart for the first 68 minutes; past that, every other entry
	// is let go and the spacing doubles (2 s to 2.3 h, ... 32 s at 24 h). Slots past the last
	// entry repeat it.
	IndexEntries = 4096
	// IndexSpacing is the least time between two indexed key frames at first (1 s); a seek
	// lands on the indexed key frame at or before its target.
	IndexSpacing = time.Second
)

// AMF0 type markers of the file metadata, beyond those of amf.go.
const (
	amfObject      = 0x03
	amfObjectEnd   = 0x09
	amfStrictArray = 0x0a
)

// KeyframeIndex collects the key frames of a file for its onMetaData: at most IndexEntries,
// at least a spacing apart (IndexSpacing, doubled each time the index is full).
type KeyframeIndex struct {
	times   []uint32 // milliseconds
	pos     []int64  // file offset of the tag
	spacing uint32   // milliseconds
}

// Add notes a key frame's tag at ms (its timestamp) and offset pos, unless it is closer than
// the spacing to the last one kept.
func (x *KeyframeIndex) Add(ms uint32, pos int64) {
	if x.spacing == 0 {
		x.spacing = uint32(IndexSpacing / time.Millisecond)
	}
	if n := len(x.times); n > 0 && ms < x.times[n-1]+x.spacing {
		return
	}
	if len(x.times) == IndexEntries {
		// Keep every other entry (the first stays), and double the spacing.
		k := 0
		for i := 0; i < len(x.times); i += 2 {
			x.times[k], x.pos[k] = x.times[i], x.pos[i]
			k++
		}
		x.times, x.pos = x.times[:k], x.pos[:k]
		x.spacing *= 2
		if ms < x.times[k-1]+x.spacing {
			return
		}
	}
	x.times = append(x.times, ms)
	x.pos = append(x.pos, pos)
}

// Len returns the number of key frames indexed.
func (x *KeyframeIndex) Len() int { return len(x.times) }

// fileMeta is the onMetaData body of a file and where its values are: offsets of the 8-byte
// numbers in body.
type fileMeta struct {
	body               []byte
	duration, filesize int
	times, positions   int // the first slot's; slots are 9 bytes apart
	slots              int
}

// newFileMeta builds the onMetaData of a file of tracks, its values zero: an AMF0
// "onMetaData" string and an ECMA array of duration, filesize, the tracks' descriptions and
// the keyframes object.
func newFileMeta(tracks []media.Track) *fileMeta { return newFileMetaSlots(tracks, IndexEntries) }

// newFileMetaSlots is newFileMeta with room for slots key frames.
func newFileMetaSlots(tracks []media.Track, slots int) *fileMeta {
	m := &fileMeta{slots: slots}
	b := appendAMFString(nil, "onMetaData")
	b = append(b, amfECMAArray)
	count := len(b)
	b = append(b, 0, 0, 0, 0)
	n := 0
	key := func(k string) {
		b = binary.BigEndian.AppendUint16(b, uint16(len(k)))
		b = append(b, k...)
		n++
	}
	num := func(k string, v float64) int {
		key(k)
		b = append(b, amfNumber)
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(v))
		return len(b) - 8
	}
	m.duration = num("duration", 0)
	m.filesize = num("filesize", 0)
	for _, t := range tracks {
		switch t.Codec {
		case media.CodecH264, media.CodecH265:
			id := float64(videoCodecAVC)
			if t.Codec == media.CodecH265 {
				id = float64(FourCCHEVC) // enhanced RTMP announces the FourCC as a number
			}
			num("width", float64(t.Params.Width))
			num("height", float64(t.Params.Height))
			num("videocodecid", id)
		case media.CodecAAC, media.CodecMP3:
			id := float64(soundAAC)
			if t.Codec == media.CodecMP3 {
				id = soundMP3
			}
			num("audiocodecid", id)
			num("audiosamplerate", float64(t.Params.SampleRate))
			key("stereo")
			stereo := byte(1)
			if t.Params.Channels == 1 {
				stereo = 0
			}
			b = append(b, amfBoolean, stereo)
		}
	}
	key("keyframes")
	b = append(b, amfObject)
	array := func(k string) int {
		b = binary.BigEndian.AppendUint16(b, uint16(len(k)))
		b = append(b, k...)
		b = append(b, amfStrictArray)
		b = binary.BigEndian.AppendUint32(b, uint32(m.slots))
		at := len(b) + 1
		for range m.slots {
			b = append(b, amfNumber, 0, 0, 0, 0, 0, 0, 0, 0)
		}
		return at
	}
	m.times = array("times")
	m.positions = array("filepositions")
	b = append(b, 0, 0, amfObjectEnd) // end of keyframes
	b = append(b, 0, 0, amfObjectEnd) // end of the ECMA array
	binary.BigEndian.PutUint32(b[count:], uint32(n))
	m.body = b
	return m
}

// fill writes the values: the duration, the file size, and the index (with no key frame
// indexed, every slot says the start of the media at first; slots past the last entry repeat it).
func (m *fileMeta) fill(d time.Duration, size int64, x *KeyframeIndex, first int64) {
	put := func(off int, v float64) { binary.BigEndian.PutUint64(m.body[off:], math.Float64bits(v)) }
	put(m.duration, d.Seconds())
	put(m.filesize, float64(size))
	t, p := 0.0, float64(first)
	for i := range m.slots {
		if i < x.Len() {
			t, p = float64(x.times[i])/1000, float64(x.pos[i])
		}
		put(m.times+9*i, t)
		put(m.positions+9*i, p)
	}
}

// FillMetaData writes a file's duration, size and key frame index into its onMetaData body
// in place, body being one that a FileWriter wrote (the index's room is what the body has).
// first is the offset of the first media tag, which empty slots point at when nothing is
// indexed. It fails for another body (ErrMalformed), changing nothing.
func FillMetaData(body []byte, d time.Duration, size int64, x *KeyframeIndex, first int64) error {
	m, err := parseFileMeta(body)
	if err != nil {
		return err
	}
	m.fill(d, size, x, first)
	return nil
}

// parseFileMeta locates the values of an onMetaData body laid out as newFileMeta does:
// "onMetaData", an ECMA array holding the numbers duration and filesize and a keyframes
// object of two strict arrays of numbers of the same length, times and filepositions.
func parseFileMeta(body []byte) (*fileMeta, error) {
	m := &fileMeta{body: body, duration: -1, filesize: -1, times: -1, positions: -1}
	bad := func(what string) error { return fmt.Errorf("flv: file metadata: %s: %w", what, ErrMalformed) }
	r := amfReader{b: body}
	if s, ok := r.str(); !ok || s != "onMetaData" {
		return nil, bad("no onMetaData name")
	}
	if !r.marker(amfECMAArray) || !r.skip(4) {
		return nil, bad("no ECMA array")
	}
	for {
		k, ok := r.key()
		if !ok {
			return nil, bad("truncated")
		}
		if k == "" {
			if !r.marker(amfObjectEnd) {
				return nil, bad("bad end of array")
			}
			break
		}
		switch k {
		case "duration", "filesize":
			at := r.n + 1
			if !r.marker(amfNumber) || !r.skip(8) {
				return nil, bad(k + " is no number")
			}
			if k == "duration" {
				m.duration = at
			} else {
				m.filesize = at
			}
		case "keyframes":
			if err := m.parseKeyframes(&r); err != nil {
				return nil, err
			}
		default:
			if !r.value(0) {
				return nil, bad("value of " + k)
			}
		}
	}
	if m.duration < 0 || m.filesize < 0 || m.times < 0 || m.positions < 0 {
		return nil, bad("duration, filesize or keyframes missing")
	}
	return m, nil
}

// parseKeyframes locates the times and filepositions arrays of the keyframes object.
func (m *fileMeta) parseKeyframes(r *amfReader) error {
	bad := func(what string) error { return fmt.Errorf("flv: file metadata keyframes: %s: %w", what, ErrMalformed) }
	if !r.marker(amfObject) {
		return bad("not an object")
	}
	slots := -1
	for {
		k, ok := r.key()
		if !ok {
			return bad("truncated")
		}
		if k == "" {
			if !r.marker(amfObjectEnd) {
				return bad("bad end")
			}
			return nil
		}
		if k != "times" && k != "filepositions" {
			if !r.value(0) {
				return bad("value of " + k)
			}
			continue
		}
		n, ok := r.u32(amfStrictArray)
		if !ok || slots >= 0 && n != slots || n > (len(r.b)-r.n)/9 {
			return bad(k + " is no array of the index's length")
		}
		slots = n
		at := r.n + 1
		for range n {
			if !r.marker(amfNumber) || !r.skip(8) {
				return bad(k + " holds a value that is no number")
			}
		}
		if k == "times" {
			m.times = at
		} else {
			m.positions = at
		}
		m.slots = n
	}
}

// amfReader walks AMF0 values, checking every length against what is left.
type amfReader struct {
	b []byte
	n int
}

func (r *amfReader) skip(k int) bool {
	if k < 0 || len(r.b)-r.n < k {
		return false
	}
	r.n += k
	return true
}

func (r *amfReader) marker(m byte) bool {
	if r.n >= len(r.b) || r.b[r.n] != m {
		return false
	}
	r.n++
	return true
}

// u32 reads a marker and the 32-bit count after it.
func (r *amfReader) u32(m byte) (int, bool) {
	if !r.marker(m) || len(r.b)-r.n < 4 {
		return 0, false
	}
	v := binary.BigEndian.Uint32(r.b[r.n:])
	r.n += 4
	return int(v), v <= math.MaxInt32
}

// key reads an object key: a 16-bit length and its bytes ("" before the end marker).
func (r *amfReader) key() (string, bool) {
	if len(r.b)-r.n < 2 {
		return "", false
	}
	l := int(binary.BigEndian.Uint16(r.b[r.n:]))
	if !r.skip(2) || len(r.b)-r.n < l {
		return "", false
	}
	r.n += l
	return string(r.b[r.n-l : r.n]), true
}

// str reads a string value.
func (r *amfReader) str() (string, bool) {
	if !r.marker(amfString) {
		return "", false
	}
	return r.key()
}

// amfMaxDepth bounds the nesting of the values skipped.
const amfMaxDepth = 8

// value skips one value of the types a file's metadata may hold.
func (r *amfReader) value(depth int) bool {
	if r.n >= len(r.b) || depth > amfMaxDepth {
		return false
	}
	switch r.b[r.n] {
	case amfNumber:
		return r.skip(9)
	case amfBoolean:
		return r.skip(2)
	case amfString:
		_, ok := r.str()
		return ok
	case amfObject, amfECMAArray:
		if !r.skip(1) || r.b[r.n-1] == amfECMAArray && !r.skip(4) {
			return false
		}
		for {
			k, ok := r.key()
			if !ok {
				return false
			}
			if k == "" {
				return r.marker(amfObjectEnd)
			}
			if !r.value(depth + 1) {
				return false
			}
		}
	case amfStrictArray:
		n, ok := r.u32(amfStrictArray)
		if !ok || n > len(r.b)-r.n { // every value is a byte at least
			return false
		}
		for range n {
			if !r.value(depth + 1) {
				return false
			}
		}
		return true
	}
	return false
}

// MetaData is what the onMetaData of a file written by a FileWriter states.
type MetaData struct {
	Duration time.Duration
	FileSize int64
	// Keyframes are the index's entries, the slots that repeat the last one left out.
	Keyframes []Keyframe
}

// Keyframe is an entry of the key frame index: the timestamp of a key frame's tag, and the
// offset of the tag in the file.
type Keyframe struct {
	Time time.Duration
	Pos  int64
}

// ParseMetaData reads the onMetaData body of a file written by a FileWriter (ErrMalformed for
// another one).
func ParseMetaData(body []byte) (MetaData, error) {
	m, err := parseFileMeta(body)
	if err != nil {
		return MetaData{}, err
	}
	get := func(off int) float64 { return math.Float64frombits(binary.BigEndian.Uint64(body[off:])) }
	md := MetaData{Duration: time.Duration(get(m.duration) * float64(time.Second)), FileSize: int64(get(m.filesize))}
	for i := range m.slots {
		k := Keyframe{Time: time.Duration(math.Round(get(m.times+9*i)*1000)) * time.Millisecond, Pos: int64(get(m.positions + 9*i))}
		if n := len(md.Keyframes); n > 0 && md.Keyframes[n-1] == k {
			break
		}
		md.Keyframes = append(md.Keyframes, k)
	}
	return md, nil
}
