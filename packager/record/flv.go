package record

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/flv"
)

// flvFile writes an FLV file tag by tag (each tag one Write: a crash cuts at most one tag);
// Close writes the duration, size and key frame index into the onMetaData reserved for them
// at the start (flv.FileWriter.MetaData).
type flvFile struct {
	ws  io.WriteSeeker
	out *counter
	fw  *flv.FileWriter
	clk clock
}

func newFLV(w io.WriteSeeker, tracks []media.Track) (*flvFile, error) {
	out := &counter{w: w}
	fw, err := flv.NewFileWriter(out, tracks)
	if err != nil {
		return nil, err
	}
	return &flvFile{ws: w, out: out, fw: fw, clk: clock{tracks: tracks}}, nil
}

func (f *flvFile) WriteUnit(au *media.AccessUnit) error {
	if !f.clk.admit(au) {
		return nil
	}
	return f.fw.WriteAccessUnit(au)
}

func (f *flvFile) Duration() time.Duration { return f.clk.end }
func (f *flvFile) Size() int64             { return f.out.n }

// Close rewrites the onMetaData in place: the same bytes but for the values of its numbers,
// so that a crash while it is written leaves valid metadata (and Repair writes it again).
func (f *flvFile) Close() error {
	off, body := f.fw.MetaData()
	return writeAtEnd(f.ws, off, body, f.out.n)
}

// writeAtEnd writes b at off, then seeks back to end.
func writeAtEnd(ws io.WriteSeeker, off int64, b []byte, end int64) error {
	if _, err := ws.Seek(off, io.SeekStart); err != nil {
		return fmt.Errorf("record: seek to %d: %w", off, err)
	}
	if _, err := ws.Write(b); err != nil {
		return fmt.Errorf("record: write %d bytes at %d: %w", len(b), off, err)
	}
	if _, err := ws.Seek(end, io.SeekStart); err != nil {
		return fmt.Errorf("record: seek to the end at %d: %w", end, err)
	}
	return nil
}

// repairFLV truncates an FLV file after its last whole tag, writes its duration, size and key
// frame index into its onMetaData (when a FileWriter wrote it) and returns the time of its
// last media tag.
func repairFLV(f *os.File) (time.Duration, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	cr := &counter{w: io.Discard}
	rd, err := flv.NewFileReader(io.TeeReader(bufio.NewReaderSize(f, 1<<16), cr))
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrNothingToRepair, err)
	}
	// The reader consumes each tag with the PreviousTagSize that follows it.
	keep := cr.n
	var first, last uint32
	units := 0
	var (
		meta             []byte
		metaAt, mediaAt  int64
		index            flv.KeyframeIndex
		vt               flv.VideoTag
		lastTS, lastStep = map[flv.TagType]uint32{}, map[flv.TagType]uint32{}
	)
	for {
		at := keep
		tag, err := rd.ReadTag()
		if err != nil {
			break // the end, a tag cut short, or bytes that are no tag: keep what came before
		}
		keep = cr.n
		switch tag.Type {
		case flv.TagScript:
			if meta == nil && units == 0 {
				meta, metaAt = tag.Body, at+flvTagHeader
			}
		case flv.TagVideo, flv.TagAudio:
			if tag.Type == flv.TagVideo && flv.ParseVideoTag(tag.Body, 4, &vt) == nil && vt.Key && vt.Type == flv.PacketCodedFrames {
				index.Add(tag.Timestamp, at)
			}
			if units == 0 {
				first, mediaAt = tag.Timestamp, at
			}
			if p, ok := lastTS[tag.Type]; ok && tag.Timestamp > p {
				lastStep[tag.Type] = tag.Timestamp - p
			}
			lastTS[tag.Type] = tag.Timestamp
			units++
			last = tag.Timestamp
		}
	}
	if err := f.Truncate(keep); err != nil {
		return 0, fmt.Errorf("record: repair flv: truncate: %w", err)
	}
	if units == 0 {
		return 0, ErrNothingToRepair
	}
	if meta != nil {
		var end uint32
		for typ, ts := range lastTS {
			end = max(end, ts+lastStep[typ])
		}
		if flv.FillMetaData(meta, time.Duration(end)*time.Millisecond, keep, &index, mediaAt) == nil {
			if _, err := f.WriteAt(meta, metaAt); err != nil {
				return 0, fmt.Errorf("record: repair flv: write metadata: %w", err)
			}
		}
	}
	return time.Duration(last-first) * time.Millisecond, nil
}

// flvTagHeader is the size of an FLV tag header: a tag's body starts that far after it.
const flvTagHeader = 11
