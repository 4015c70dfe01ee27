package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/Eyevinn/mp4ff/mp4"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/fmp4"
)

// maxMoofSize bounds a moof read during repair: ours hold a second of samples.
const maxMoofSize = 16 << 20

// RepairMP4 truncates a fragmented MP4 or QuickTime file after its last whole moof+mdat pair
// (dropping a partial fragment and any old index) and appends a fresh mfra index. It returns
// the media duration kept.
func RepairMP4(f *os.File) (time.Duration, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size()
	var (
		off, keep  int64
		timescales = map[uint32]uint32{}
		first      = map[uint32]uint64{}
		end        = map[uint32]uint64{}
		index      fragIndex
		moof       *mp4.MoofBox
		moofAt     int64
		moovEnd    int64
	)
	for off < size {
		typ, hdr, boxLen, err := readBoxHeader(f, off, size)
		if err != nil {
			break // a header cut short: the end of what was written
		}
		if off+boxLen > size {
			break // a box cut short
		}
		switch typ {
		case "moov":
			if err := moovTimescales(f, off, boxLen, timescales); err != nil {
				return 0, fmt.Errorf("record: repair: %w", err)
			}
			keep = off + boxLen
			moovEnd = keep
		case "ftyp":
			keep = off + boxLen
		case "moof":
			if boxLen > maxMoofSize {
				return 0, fmt.Errorf("record: repair: moof of %d bytes at %d", boxLen, off)
			}
			b := make([]byte, boxLen)
			if _, err := f.ReadAt(b, off); err != nil {
				return 0, fmt.Errorf("record: repair: %w", err)
			}
			box, err := mp4.DecodeBox(uint64(off), bytes.NewReader(b))
			if err != nil {
				moof = nil
				break
			}
			moof, _ = box.(*mp4.MoofBox)
			moofAt = off
		case "mdat":
			if moof != nil {
				for i, traf := range moof.Trafs {
					if traf.Tfhd == nil || traf.Tfdt == nil {
						continue
					}
					id := traf.Tfhd.TrackID
					base := traf.Tfdt.BaseMediaDecodeTime()
					var dur uint64
					sync := false
					for j, tr := range traf.Truns {
						for k, s := range tr.Samples {
							dur += uint64(s.Dur)
							if j == 0 && k == 0 {
								sync = mp4.IsSyncSampleFlags(s.Flags)
							}
						}
					}
					if _, ok := first[id]; !ok {
						first[id] = base
					}
					end[id] = base + dur
					if sync {
						index.add(id, base, uint64(moofAt), uint32(i+1))
					}
				}
				keep = off + boxLen
			}
			moof = nil
		}
		_ = hdr
		off += boxLen
	}
	if len(timescales) == 0 {
		return 0, ErrNothingToRepair
	}
	if err := f.Truncate(keep); err != nil {
		return 0, fmt.Errorf("record: repair: truncate: %w", err)
	}
	b, err := index.encode()
	if err != nil {
		return 0, err
	}
	if _, err := f.WriteAt(b, keep); err != nil {
		return 0, fmt.Errorf("record: repair: write index: %w", err)
	}
	var d time.Duration
	for id, e := range end {
		ts := timescales[id]
		if ts == 0 {
			continue
		}
		if t := time.Duration(float64(e-first[id]) / float64(ts) * float64(time.Second)); t > d {
			d = t
		}
	}
	if len(end) == 0 {
		return 0, ErrNothingToRepair
	}
	if err := repairDurations(f, moovEnd, timescales, end); err != nil {
		return 0, err
	}
	return d, nil
}

// repairDurations states the durations of what was kept (each track's end, from the file's
// time zero) in the init segment's duration fields, when the file has them (FileInitSegment).
func repairDurations(f *os.File, moovEnd int64, timescales map[uint32]uint32, end map[uint32]uint64) error {
	if moovEnd <= 0 || moovEnd > maxMoofSize {
		return nil
	}
	b := make([]byte, moovEnd)
	if _, err := f.ReadAt(b, 0); err != nil {
		return fmt.Errorf("record: repair: read the init segment: %w", err)
	}
	init, err := fmp4.ParseFileInit(b)
	if err != nil {
		return nil // a file of an earlier version, without the fields
	}
	var d []time.Duration
	for _, id := range init.TrackIDs() {
		var v time.Duration
		if ts := timescales[id]; ts > 0 {
			v = time.Duration(media.Rescale(int64(end[id]), int(ts), int(time.Second)))
		}
		d = append(d, v)
	}
	for _, p := range init.Patches(d) {
		if _, err := f.WriteAt(p.Data[:], int64(p.Off)); err != nil {
			return fmt.Errorf("record: repair: write the duration at %d: %w", p.Off, err)
		}
	}
	return nil
}

// readBoxHeader reads the type and length of the box at off (a 64-bit size too).
func readBoxHeader(r io.ReaderAt, off, size int64) (typ string, hdrLen, boxLen int64, err error) {
	var h [16]byte
	if _, err := r.ReadAt(h[:8], off); err != nil {
		return "", 0, 0, err
	}
	boxLen, hdrLen = int64(binary.BigEndian.Uint32(h[:4])), 8
	switch boxLen {
	case 0:
		boxLen = size - off // to the end of the file
	case 1:
		if _, err := r.ReadAt(h[8:16], off+8); err != nil {
			return "", 0, 0, err
		}
		boxLen, hdrLen = int64(binary.BigEndian.Uint64(h[8:16])), 16
	}
	if boxLen < hdrLen {
		return "", 0, 0, errors.New("bad box size")
	}
	return string(h[4:8]), hdrLen, boxLen, nil
}

// moovTimescales reads the track IDs and timescales of the moov at off.
func moovTimescales(f *os.File, off, n int64, out map[uint32]uint32) error {
	if n > maxMoofSize {
		return fmt.Errorf("moov of %d bytes", n)
	}
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		return err
	}
	box, err := mp4.DecodeBox(uint64(off), bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("moov: %w", err)
	}
	moov, ok := box.(*mp4.MoovBox)
	if !ok {
		return errors.New("moov is not a moov")
	}
	for _, trak := range moov.Traks {
		if trak.Tkhd != nil && trak.Mdia != nil && trak.Mdia.Mdhd != nil {
			out[trak.Tkhd.TrackID] = trak.Mdia.Mdhd.Timescale
		}
	}
	return nil
}
