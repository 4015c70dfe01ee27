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

// flvFile writes an FLV file tag by tag (each tag one Write: a crash cuts at most one tag).
type flvFile struct {
	out *counter
	fw  *flv.FileWriter
	clk clock
}

func newFLV(w io.Writer, tracks []media.Track) (*flvFile, error) {
	out := &counter{w: w}
	fw, err := flv.NewFileWriter(out, tracks)
	if err != nil {
		return nil, err
	}
	return &flvFile{out: out, fw: fw, clk: clock{tracks: tracks}}, nil
}

func (f *flvFile) WriteUnit(au *media.AccessUnit) error {
	if !f.clk.admit(au) {
		return nil
	}
	return f.fw.WriteAccessUnit(au)
}

func (f *flvFile) Duration() time.Duration { return f.clk.end }
func (f *flvFile) Size() int64             { return f.out.n }
func (f *flvFile) Close() error            { return nil } // FLV needs no index

// repairFLV truncates an FLV file after its last whole tag and returns the time of its last
// media tag.
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
	for {
		tag, err := rd.ReadTag()
		if err != nil {
			break // the end, a tag cut short, or bytes that are no tag: keep what came before
		}
		keep = cr.n
		if tag.Type == flv.TagVideo || tag.Type == flv.TagAudio {
			if units == 0 {
				first = tag.Timestamp
			}
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
	return time.Duration(last-first) * time.Millisecond, nil
}
