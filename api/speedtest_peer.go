package api

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// The speed-test peer endpoints let one sluice measure its network against another: ping
// answers at once, download streams bytes, upload swallows them. They are public, like
// /healthz, so that a peer needs no token; each request is bounded in size, and only
// maxSpeedtestTransfers downloads and uploads run at once.
const (
	speedtestDefaultBytes = 10 << 20  // download size when ?bytes= is not given
	speedtestMaxDownload  = 64 << 20  // largest download a request may ask for
	speedtestMaxUpload    = 256 << 20 // largest upload a request may send

	// maxSpeedtestTransfers is how many downloads and uploads run at once, all clients
	// together; one more is answered 503 with Retry-After speedtestRetry. A measuring sluice
	// runs one transfer at a time, so this lets four measure at once, while anyone who can
	// reach the port can take at most that share of the node's link from its viewers.
	maxSpeedtestTransfers = 4
	speedtestRetry        = 10 * time.Second
)

// speedtestTransfers is the key under which the server counts the transfers under way.
const speedtestTransfers = "transfers"

// speedtestEnter counts one more transfer, or answers 503 and false when maxSpeedtestTransfers
// run already; a true is to be paired with s.speedtests.leave(speedtestTransfers).
func (s *server) speedtestEnter(w http.ResponseWriter, r *http.Request) bool {
	if s.speedtests.enter(speedtestTransfers, maxSpeedtestTransfers) {
		return true
	}
	s.fail(w, r, &apiError{Status: http.StatusServiceUnavailable, Code: CodeUnavailable, RetryAfter: speedtestRetry,
		Message: fmt.Sprintf("%d speed-test transfers are under way already; try again when one ends", maxSpeedtestTransfers)})
	return false
}

var (
	speedtestBlockOnce sync.Once
	speedtestBlock     []byte // 64 KiB of random bytes, shared by every download (read-only)
)

func speedtestData() []byte {
	speedtestBlockOnce.Do(func() {
		speedtestBlock = make([]byte, 64<<10)
		_, _ = rand.Read(speedtestBlock)
	})
	return speedtestBlock
}

func (s *server) speedtestPing(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{"pong": true})
}

func (s *server) speedtestDownload(w http.ResponseWriter, r *http.Request) {
	n := int64(speedtestDefaultBytes)
	if q := r.URL.Query().Get("bytes"); q != "" {
		v, err := strconv.ParseInt(q, 10, 64)
		if err != nil || v < 1 || v > speedtestMaxDownload {
			s.fail(w, r, errValidation("bytes", "bytes must be an integer from 1 to %d", speedtestMaxDownload))
			return
		}
		n = v
	}
	if !s.speedtestEnter(w, r) {
		return
	}
	defer s.speedtests.leave(speedtestTransfers)
	block := speedtestData()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
	w.Header().Set("Cache-Control", "no-store")
	for n > 0 {
		chunk := block[:min(n, int64(len(block)))]
		if _, err := w.Write(chunk); err != nil {
			return
		}
		n -= int64(len(chunk))
	}
}

func (s *server) speedtestUpload(w http.ResponseWriter, r *http.Request) {
	if !s.speedtestEnter(w, r) {
		return
	}
	defer s.speedtests.leave(speedtestTransfers)
	n, err := io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, speedtestMaxUpload))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		s.fail(w, r, &apiError{Status: http.StatusRequestEntityTooLarge, Code: CodeTooLarge,
			Message: fmt.Sprintf("a speed-test upload may send at most %d bytes", speedtestMaxUpload)})
		return
	case err != nil:
		return // the client went away
	}
	writeJSON(w, http.StatusOK, map[string]any{"bytes": n})
}
