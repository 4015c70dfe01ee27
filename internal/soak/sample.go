package soak

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Sample is one measurement of the server process.
type Sample struct {
	Goroutines int
	FDs        int
	Children   []Child
	RSS        int64 // bytes
	Mem        MemStats
}

// NetRSS is the resident size less the heap the runtime freed but still holds: what the
// process would occupy once the scavenger has returned that memory.
func (s Sample) NetRSS() int64 { return s.RSS - s.Mem.Retained() }

// Take measures pid, whose pprof handlers serve at debugURL (http://host:port). The heap
// profile is asked with gc=1 first, so that the runtime collects before it reports, and RSS
// is read after it.
func Take(ctx context.Context, pid int, debugURL string) (Sample, error) {
	var s Sample
	heap, err := fetch(ctx, debugURL+"/debug/pprof/heap?gc=1&debug=1")
	if err != nil {
		return s, err
	}
	if s.Mem, err = ParseMemStats(heap); err != nil {
		return s, err
	}
	gr, err := fetch(ctx, debugURL+"/debug/pprof/goroutine?debug=1")
	if err != nil {
		return s, err
	}
	if s.Goroutines, err = ParseGoroutineTotal(gr); err != nil {
		return s, err
	}
	if s.FDs, err = OpenFDs(pid); err != nil {
		return s, err
	}
	if s.Children, err = Children(pid); err != nil {
		return s, err
	}
	if s.RSS, err = RSS(pid); err != nil {
		return s, err
	}
	return s, nil
}

// fetch GETs url and returns its body, failing on any status but 200.
func fetch(ctx context.Context, url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("get %s: read: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("get %s: status %d: %s", url, resp.StatusCode, truncate(body))
	}
	return body, nil
}
