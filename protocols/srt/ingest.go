package srt

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/packager/mpegts"
)

// Ingest time limits: a publisher must announce its tracks (PAT, PMT and decodable parameters)
// within tracksTimeout, and then never go silent for stallTimeout. gosrt's peer idle timeout
// only notices a peer that sends nothing at all, keepalives included. Variables for tests.
var (
	tracksTimeout = 15 * time.Second
	stallTimeout  = 10 * time.Second
)

// errStalled ends a publisher that stopped sending media but kept the connection alive.
var errStalled = errors.New("publisher stopped sending media")

// ingestResult says how a publishing session went.
type ingestResult struct {
	units int64
	bytes int64
}

// ingest demuxes MPEG-TS from conn and publishes it through pub until conn fails or goes
// silent, then closes the publisher (and any it opened again after a program change). The
// caller closes conn to end it early. It returns io.EOF when the peer ended the connection.
func ingest(conn io.ReadCloser, pub *stream.Publisher, log *slog.Logger) (ingestResult, error) {
	w := newWatchdog(conn)
	defer w.stop()
	res, err := ingestLoop(w, pub, log)
	res.bytes = w.bytes.Load()
	if w.fired.Load() {
		if !w.started.Load() {
			return res, fmt.Errorf("no tracks within %v: %w", tracksTimeout, ErrNoMedia)
		}
		return res, fmt.Errorf("%w for %v", errStalled, stallTimeout)
	}
	return res, err
}

func ingestLoop(w *watchdog, pub *stream.Publisher, log *slog.Logger) (res ingestResult, err error) {
	strm := pub.Stream()
	defer func() { pub.Close() }()
	for {
		d := mpegts.NewDemuxer(w)
		tracks, err := d.Tracks()
		if err != nil {
			return res, err
		}
		if err := pub.SetTracks(tracks); err != nil {
			return res, err
		}
		w.mediaStarted()
		log.Info("publishing", "tracks", describeTracks(tracks))
		fixer := newDTSFixer(tracks)
		for {
			au, err := d.Read()
			if errors.Is(err, mpegts.ErrProgramChanged) {
				log.Info("program changed: publishing a new session")
				pub.Close()
				if pub, err = strm.Publish(); err != nil {
					return res, err
				}
				break
			}
			if err != nil {
				if st := d.Stats(); st.CCErrors > 0 || st.DroppedPES > 0 {
					log.Info("transport stream damage", "cc_errors", st.CCErrors,
						"dropped_pes", st.DroppedPES, "dropped_units", st.DroppedUnits)
				}
				if fixer.fixed > 0 || fixer.rebase > 0 {
					log.Info("timestamps repaired", "nudged", fixer.fixed, "clock_resets", fixer.rebase)
				}
				return res, err
			}
			fixer.fix(au)
			if err := pub.Write(au); err != nil {
				return res, err
			}
			res.units++
		}
	}
}

// watchdog counts the bytes read from a connection and closes it when no tracks come within
// tracksTimeout, or no bytes within stallTimeout once they have.
type watchdog struct {
	r       io.ReadCloser
	timer   *time.Timer
	bytes   atomic.Int64
	fired   atomic.Bool
	started atomic.Bool
}

func newWatchdog(r io.ReadCloser) *watchdog {
	w := &watchdog{r: r}
	w.timer = time.AfterFunc(tracksTimeout, func() {
		w.fired.Store(true)
		_ = r.Close()
	})
	return w
}

// Read reads from the connection and re-arms the stall timer.
func (w *watchdog) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if n > 0 {
		w.bytes.Add(int64(n))
		if w.started.Load() {
			w.timer.Reset(stallTimeout)
		}
	}
	return n, err
}

// mediaStarted switches from the tracks deadline to the stall timeout.
func (w *watchdog) mediaStarted() {
	if !w.started.Swap(true) {
		w.timer.Reset(stallTimeout)
	}
}

func (w *watchdog) stop() { w.timer.Stop() }

// describeTracks returns a short text of the tracks for logs: "H264 1280x720, AAC 48000Hz 2ch".
func describeTracks(tracks []media.Track) string {
	var b []byte
	for i, t := range tracks {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, t.Codec.String()...)
		if t.Codec.IsVideo() {
			b = fmt.Appendf(b, " %dx%d", t.Params.Width, t.Params.Height)
		} else {
			b = fmt.Appendf(b, " %dHz %dch", t.Params.SampleRate, t.Params.Channels)
		}
	}
	return string(b)
}
