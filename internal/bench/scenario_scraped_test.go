package bench

import (
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/procfs"
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

// TestScrapeCost: the scraper reads the server's time on a CPU around each scrape: a handler
// that spends 20 ms on a CPU costs at least that; the job's share over the scrape's wall time
// is taken off (a job using a whole core leaves nothing); the row and the check state it.
func TestScrapeCost(t *testing.T) {
	me := os.Getpid()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		from, err := procfs.OnCPU(me)
		for d := time.Duration(0); err == nil && d < 20*time.Millisecond; {
			var now time.Duration
			now, err = procfs.OnCPU(me)
			d = now - from
		}
		_, _ = w.Write([]byte("sluice_up 1\n"))
	}))
	defer srv.Close()
	sc := &scraper{url: srv.URL, pid: me}
	for range 3 {
		if err := sc.scrape(srv.Client()); err != nil {
			t.Fatal(err)
		}
	}
	costs := sc.costs(Usage{})
	if len(costs) != 3 || slices.Min(costs) < 20 {
		t.Fatalf("costs %v ms, want 3 of at least 20", costs)
	}
	busy := sc.costs(Usage{CPU: time.Second, Wall: time.Second})
	for i := range busy {
		if busy[i] >= costs[i] {
			t.Errorf("a job using a whole core took nothing off: %v ms of %v", busy, costs)
		}
	}
	if none := (&scraper{url: srv.URL}); none.scrape(srv.Client()) != nil || len(none.costs(Usage{})) != 0 {
		t.Error("a scraper without a pid measured a cost")
	}

	o := &Outcome{Scenarios: []Scenario{{Name: "player-srt-scraped"}}, Runs: map[string]map[Arm][]RunResult{
		"player-srt-scraped": {
			ArmSluice: {{Usage: Usage{CPU: 35 * time.Millisecond, Wall: time.Second}, ScrapeCPU: []float64{1, 2, 9}},
				{Usage: Usage{CPU: 35 * time.Millisecond, Wall: time.Second}, ScrapeCPU: []float64{2, 3}}},
			ArmRef: {{Usage: Usage{CPU: 30 * time.Millisecond, Wall: time.Second}}},
		},
	}}
	rows := o.Rows()
	checkRows(t, rows, "player-srt-scraped", []rowCheck{
		{scrapeMetric, func(r Row) bool {
			return r.Sluice != 2 || !math.IsNaN(r.Ref) || r.Note != "0.040% of a core at one scrape every 5s; median of 5 scrapes, from each run's set-up to the end of its window"
		}, "scrape row %+v"},
	})
	checks := strings.Join(Checks(rows), "\n")
	if want := "Measured directly, a scrape costs the server 2.00 ms of CPU (median), 0.040% of a core at that interval: ratio 1.013 against the unscraped player's CPU (**yes**)."; !strings.Contains(checks, want) {
		t.Errorf("checks lack %q:\n%s", want, checks)
	}
	if !strings.Contains(checks, "(ratio 1.17: 3.50% against 3.00% of a core)") {
		t.Errorf("checks lack the two runs' ratio:\n%s", checks)
	}
}
