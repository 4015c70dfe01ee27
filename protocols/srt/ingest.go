package srt

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/sluicemedia/sluice/internal/ingest"
	"github.com/sluicemedia/sluice/internal/stream"
)

// Ingest time limits: a publisher must bring media (PAT, PMT and a first unit with decodable
// parameters) within tracksTimeout, and then never go silent for stallTimeout. gosrt's peer
// idle timeout only notices a peer that sends nothing at all, keepalives included. Variables
// for tests.
var (
	tracksTimeout = 15 * time.Second
	stallTimeout  = 10 * time.Second
)

// readSize is the read buffer: larger than any SRT payload, so a read takes a whole packet.
const readSize = 64 << 10

// errStalled ends a publisher that stopped sending media but kept the connection alive.
var errStalled = errors.New("publisher stopped sending media")

// ingestResult says how a publishing session went.
type ingestResult struct {
	units int64
	bytes int64
}

// publishTS feeds the MPEG-TS conn carries to a TSFeed publishing through pub, until conn
// fails or goes silent, then closes the publisher (and any the feed opened again after a
// program change or a timestamp jump). The caller closes conn to end it early. It returns
// io.EOF when the peer ended the connection.
func publishTS(conn io.ReadCloser, pub *stream.Publisher, log *slog.Logger) (ingestResult, error) {
	w := newWatchdog(conn)
	defer w.stop()
	feed := ingest.NewTSFeed(ingest.NewHeldPublisher(pub, log))
	err := feedLoop(w, feed)
	feed.Finish()
	if st := feed.Stats(); st.CCErrors > 0 || st.DroppedPES > 0 {
		log.Info("transport stream damage", "cc_errors", st.CCErrors,
			"dropped_pes", st.DroppedPES, "dropped_units", st.DroppedUnits)
	}
	res := ingestResult{units: feed.Units(), bytes: w.bytes.Load()}
	if w.fired.Load() {
		if !w.started.Load() {
			return res, fmt.Errorf("no media within %v: %w", tracksTimeout, ErrNoMedia)
		}
		return res, fmt.Errorf("%w for %v", errStalled, stallTimeout)
	}
	return res, err
}

// feedLoop reads w into feed until either fails.
func feedLoop(w *watchdog, feed *ingest.TSFeed) error {
	buf := make([]byte, readSize)
	for {
		n, err := w.Read(buf)
		if n > 0 {
			if _, ferr := feed.Write(buf[:n]); ferr != nil {
				return ferr
			}
			if feed.Units() > 0 {
				w.mediaStarted()
			}
		}
		if err != nil {
			return err
		}
	}
}

// watchdog counts the bytes read from a connection and closes it when no media comes within
// tracksTimeout, or no bytes within stallTimeout once it has.
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
