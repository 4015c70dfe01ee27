package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// scrapeEvery is how often player-srt-scraped scrapes /metrics (issue 14: every 5 s during the
// player benchmark; Prometheus's default interval is 15 s).
const scrapeEvery = 5 * time.Second

// scrapedScenario is player-srt on sluice in both arms; in sluice's arm a scraper reads
// /metrics every scrapeEvery, from the set-up to the clean-up, the window between. The CPU
// ratio is what scraping costs the media path; a scrape that fails fails the run.
func scrapedScenario(ctx context.Context, env *Env, arm Arm, sl *Sluice) (*setup, error) {
	st, err := playerScenario(1, "srt")(ctx, env, ArmSluice, sl)
	if err != nil || arm != ArmSluice {
		return st, err
	}
	sc := &scraper{url: "http://" + sl.Addr + "/metrics", stop: make(chan struct{})}
	sc.wg.Go(sc.run)
	check, cleanup := st.check, st.cleanup
	st.check = func() (string, error) {
		note, err := check()
		if err != nil {
			return note, err
		}
		n, bytes, serr := sc.result()
		if serr != nil {
			return note, serr
		}
		if n == 0 {
			return note, fmt.Errorf("no scrape of /metrics answered during the run")
		}
		return strings.TrimSpace(fmt.Sprintf("%s %d scrapes of %d KiB", note, n, bytes/int64(n)>>10)), nil
	}
	st.cleanup = func() {
		close(sc.stop)
		sc.wg.Wait()
		cleanup()
	}
	return st, nil
}

// scraper reads a /metrics endpoint with the bench's metrics token until stop closes.
type scraper struct {
	url   string
	stop  chan struct{}
	wg    sync.WaitGroup
	n     atomic.Int64
	bytes atomic.Int64
	mu    sync.Mutex
	err   error
}

func (s *scraper) run() {
	client := &http.Client{Timeout: scrapeEvery}
	tick := time.NewTicker(scrapeEvery)
	defer tick.Stop()
	for {
		if err := s.scrape(client); err != nil {
			s.mu.Lock()
			if s.err == nil {
				s.err = err
			}
			s.mu.Unlock()
		}
		select {
		case <-s.stop:
			return
		case <-tick.C:
		}
	}
}

func (s *scraper) scrape(client *http.Client) error {
	req, err := http.NewRequest(http.MethodGet, s.url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+benchMetricsToken)
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("scrape %s: %w", s.url, err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		return fmt.Errorf("scrape %s: %w", s.url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("scrape %s: status %d", s.url, resp.StatusCode)
	}
	s.n.Add(1)
	s.bytes.Add(n)
	return nil
}

// result returns the scrapes answered so far, their bytes, and the first error.
func (s *scraper) result() (int, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int(s.n.Load()), s.bytes.Load(), s.err
}
