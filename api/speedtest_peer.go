package api

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
)

// The speed-test peer endpoints let one sluice measure its network against another: ping
// answers at once, download streams bytes, upload swallows them. They are public, like
// /healthz, so that a peer needs no token; each request is bounded in size.
const (
	speedtestDefaultBytes = 10 << 20  // download size when ?bytes= is not given
	speedtestMaxDownload  = 64 << 20  // largest download a request may ask for
	speedtestMaxUpload    = 256 << 20 // largest upload a request may send
)

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
