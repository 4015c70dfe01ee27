package record

import (
	"io"
	"os"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/packager/avi"
)

// aviFile writes an AVI file natively (packager/avi): no ffmpeg for passthrough recordings.
type aviFile struct {
	w   *avi.Writer
	clk clock
}

func newAVI(w io.WriteSeeker, tracks []media.Track) (Writer, error) {
	aw, err := avi.NewWriter(w, tracks, avi.Options{})
	if err != nil {
		return nil, err
	}
	return &aviFile{w: aw, clk: clock{tracks: tracks}}, nil
}

func (a *aviFile) WriteUnit(au *media.AccessUnit) error {
	if !a.clk.admit(au) {
		return nil
	}
	return a.w.WriteUnit(au)
}

func (a *aviFile) Duration() time.Duration { return a.clk.end }
func (a *aviFile) Size() int64             { return a.w.Size() }
func (a *aviFile) Close() error            { return a.w.Close() }

func repairAVI(f *os.File) (time.Duration, error) { return avi.Repair(f) }
