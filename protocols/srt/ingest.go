package srt

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/protocols/internal/ingest"
	"github.com/sluicemedia/sluice/protocols/srt/link"
)

// Ingest time limits: a publisher must bring media (PAT, PMT and a first unit with decodable
// parameters) within tracksTimeout, and then never go silent for stallTimeout. The link's peer
// idle timeout only notices a peer that sends nothing at all, keepalives included. Variables
// for tests.
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

// publishTS feeds the MPEG-TS conn carries to a TSFeed publishing through pub, and each
// payload to rl when it is not nil, until conn fails or goes silent; then it calls left (when
// not nil) and closes the publisher (and any the feed opened again after a program change or
// a timestamp jump). The caller closes conn to end it early. It returns io.EOF when the peer
// ended the connection.
func publishTS(conn *link.Conn, pub *stream.Publisher, rl *relay, log *slog.Logger, left func()) (ingestResult, error) {
	feed := ingest.NewTSFeed(ingest.NewHeldPublisher(pub, log))
	if rl != nil {
		rl.begin()
		defer rl.end()
	}
	res, err := feedLoop(conn, feed, rl)
	defer func() { _ = conn.SetReadDeadline(time.Time{}) }()
	if left != nil {
		left()
	}
	feed.Finish()
	if st := feed.Stats(); st.CCErrors > 0 || st.DroppedPES > 0 {
		log.Info("transport stream damage", "cc_errors", st.CCErrors,
			"dropped_pes", st.DroppedPES, "dropped_units", st.DroppedUnits)
	}
	res.units = feed.Units()
	if errors.Is(err, os.ErrDeadlineExceeded) {
		if res.units == 0 {
			return res, fmt.Errorf("no media within %v: %w", tracksTimeout, ErrNoMedia)
		}
		return res, fmt.Errorf("%w for %v", errStalled, stallTimeout)
	}
	return res, err
}

// feedLoop reads conn into feed (and rl) until either fails, holding the watchdog deadline:
// tracksTimeout for the first unit, then stallTimeout from the last payload. The deadline
// moves only when half of it has passed, not on every read.
func feedLoop(conn *link.Conn, feed *ingest.TSFeed, rl *relay) (ingestResult, error) {
	var res ingestResult
	buf := make([]byte, link.MaxPayloadSize)
	started := false
	deadline := time.Now().Add(tracksTimeout)
	_ = conn.SetReadDeadline(deadline)
	for {
		n, err := conn.Read(buf)
		if err != nil {
			return res, err
		}
		res.bytes += int64(n)
		if rl != nil {
			rl.write(buf[:n])
			if !conn.Deliverable() {
				rl.flush()
			}
		}
		if _, err := feed.Write(buf[:n]); err != nil {
			return res, err
		}
		if !started && feed.Units() > 0 {
			started = true
			deadline = time.Time{}
		}
		if started {
			if now := time.Now(); deadline.IsZero() || deadline.Sub(now) < stallTimeout/2 {
				deadline = now.Add(stallTimeout)
				_ = conn.SetReadDeadline(deadline)
			}
		}
	}
}
