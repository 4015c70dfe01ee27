package bench

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestScraper: the scraper presents the metrics token, counts the answers and their bytes, and
// keeps the first failure (a wrong token's 401) for the run's check.
func TestScraper(t *testing.T) {
	body := strings.Repeat("sluice_up 1\n", 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+benchMetricsToken {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()

	ok := &scraper{url: srv.URL}
	for range 3 {
		if err := ok.scrape(srv.Client()); err != nil {
			t.Fatal(err)
		}
	}
	if n, b, err := ok.result(); n != 3 || b != int64(3*len(body)) || err != nil {
		t.Errorf("3 scrapes: got %d scrapes, %d bytes, error %v; want 3, %d, nil", n, b, err, 3*len(body))
	}

	bad := &scraper{url: srv.URL + "/", stop: make(chan struct{})}
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	})
	close(bad.stop)
	bad.run() // one scrape, then stop
	if n, _, err := bad.result(); n != 0 || err == nil || !strings.Contains(err.Error(), "status 401") {
		t.Errorf("refused scrape: got %d scrapes, error %v; want 0 and a status 401 error", n, err)
	}
}
