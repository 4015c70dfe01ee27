package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicemedia/sluice/internal/procfs"
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
	sc := &scraper{url: "http://" + sl.Addr + "/metrics", pid: sl.Pid(), stop: make(chan struct{})}
	sc.wg.Go(sc.run)
	check, collect, cleanup := st.check, st.collect, st.cleanup
	st.collect = func(sents []*Sent, res *RunResult) {
		if collect != nil {
			collect(sents, res)
		}
		res.ScrapeCPU = sc.costs(res.Usage)
	}
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

// scraper reads a /metrics endpoint with the bench's metrics token until stop closes. With a
// pid, it also reads that server's time on a CPU before and after each scrape (procfs.OnCPU,
// to the nanosecond): what one scrape costs, measured directly rather than as the difference
// of two runs' CPU, which varies between runs by more than three scrapes cost.
type scraper struct {
	url   string
	pid   int // the server; 0: no cost measured
	stop  chan struct{}
	wg    sync.WaitGroup
	n     atomic.Int64
	bytes atomic.Int64
	mu    sync.Mutex
	err   error
	spent []scrapeSpent
}

// scrapeSpent is the server's time on a CPU over one scrape, and the scrape's wall time.
type scrapeSpent struct{ cpu, wall time.Duration }

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
	cpu0, cpuErr := s.onCPU()
	t0 := time.Now()
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
	wall := time.Since(t0)
	if cpu1, err := s.onCPU(); err == nil && cpuErr == nil {
		s.mu.Lock()
		s.spent = append(s.spent, scrapeSpent{cpu: cpu1 - cpu0, wall: wall})
		s.mu.Unlock()
	}
	s.n.Add(1)
	s.bytes.Add(n)
	return nil
}

// onCPU is the server's time on a CPU so far.
func (s *scraper) onCPU() (time.Duration, error) {
	if s.pid == 0 {
		return 0, errors.New("no server pid")
	}
	return procfs.OnCPU(s.pid)
}

// costs returns the CPU each scrape cost the server, in milliseconds: its time on a CPU over
// the scrape less what the job used meanwhile at the run's rate u.
func (s *scraper) costs(u Usage) []float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]float64, 0, len(s.spent))
	for _, x := range s.spent {
		job := time.Duration(0)
		if u.Wall > 0 {
			job = time.Duration(float64(u.CPU) * float64(x.wall) / float64(u.Wall))
		}
		out = append(out, max(x.cpu-job, 0).Seconds()*1000)
	}
	return out
}

// result returns the scrapes answered so far, their bytes, and the first error.
func (s *scraper) result() (int, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int(s.n.Load()), s.bytes.Load(), s.err
}
