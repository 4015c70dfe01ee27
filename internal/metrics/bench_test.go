package metrics

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkScrape measures one scrape of 100 processes of every kind (the collector's work,
// off the media path), with the children listed as the server lists them (none here) and
// found by reading all of /proc (the default): go test -bench Scrape -benchmem ./internal/metrics/
func BenchmarkScrape(b *testing.B) {
	now := time.Now()
	var src fixed
	for i := range 20 {
		for _, p := range everyKind(now) {
			p.ID = fmt.Sprintf("%s-%d", p.ID, i)
			src = append(src, p)
		}
	}
	for _, bc := range []struct {
		name     string
		children func() []int
	}{
		{"listed", func() []int { return nil }},
		{"proc-scan", nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			m := New(Options{Token: "tok", Source: src, Children: bc.children})
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			req.Header.Set("Authorization", "Bearer tok")
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				m.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("scrape: %d", w.Code)
				}
				_, _ = io.Copy(io.Discard, w.Body)
			}
		})
	}
}
