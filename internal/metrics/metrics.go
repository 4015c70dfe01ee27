// Package metrics exports sluice's figures in the Prometheus text format: a collector reads
// the processes' state at scrape time (the media path pays nothing), and the API counts its
// requests. Prometheus types stay inside this package.
package metrics

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sluicemedia/sluice/internal/opt"
)

// Options configure New.
type Options struct {
	// Token is what a scrape must present, as a bearer token or as the basic-auth password
	// (any user name). Required: without a token sluice serves no metrics.
	Token string
	// Source gives the processes' figures at scrape time.
	Source Source
	// Children lists the process ids of the server's child processes running now (the
	// supervisor's), for sluice_child_processes; default: every direct child of this process,
	// found by reading all of /proc at each scrape, a cost that grows with the host's
	// process count.
	Children func() []int
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Metrics is sluice's metric registry and its HTTP handler.
type Metrics struct {
	reg      *prometheus.Registry
	token    [sha256.Size]byte
	handler  http.Handler
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	logins   prometheus.Counter
}

// scrapeTimeout bounds how long one scrape may take to gather (5 s); a slower gather answers
// 503.
const scrapeTimeout = 5 * time.Second

// maxConcurrentScrapes is how many scrapes gather at once (2); more answer 503 at once.
const maxConcurrentScrapes = 2

// New returns the registry with the process collector, the API's families and the Go runtime
// and process collectors.
func New(opts Options) *Metrics {
	opt.Clock(&opts.Now)
	m := &Metrics{reg: prometheus.NewRegistry(), token: sha256.Sum256([]byte(opts.Token))}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: apiRequests.Name, Help: apiRequests.Help}, apiRequests.Labels)
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: apiDuration.Name, Help: apiDuration.Help,
		Buckets: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}}, apiDuration.Labels)
	m.logins = prometheus.NewCounter(prometheus.CounterOpts{Name: loginFailures.Name, Help: loginFailures.Help})
	m.reg.MustRegister(m.requests, m.duration, m.logins,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if opts.Source != nil {
		m.reg.MustRegister(&collector{src: opts.Source, children: opts.Children, now: opts.Now})
	}
	m.handler = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		Timeout: scrapeTimeout, MaxRequestsInFlight: maxConcurrentScrapes,
		// A metric that fails is left out and logged by the client, not a failed scrape.
		ErrorHandling: promhttp.ContinueOnError,
	})
	return m
}

// ServeHTTP serves the exposition to a scrape that presents the token; others get 401.
func (m *Metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !m.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="sluice metrics", Basic realm="sluice metrics"`)
		http.Error(w, "metrics: a bearer token or basic-auth password (--metrics-token) is required", http.StatusUnauthorized)
		return
	}
	m.handler.ServeHTTP(w, r)
}

// authorized compares the presented secret with the token in constant time (over hashes, so
// that the length leaks nothing either).
func (m *Metrics) authorized(r *http.Request) bool {
	var got string
	if _, pass, ok := r.BasicAuth(); ok {
		got = pass
	} else if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		got = strings.TrimSpace(h[7:])
	}
	if got == "" {
		return false // an empty secret never passes, whatever the token
	}
	sum := sha256.Sum256([]byte(got))
	return subtle.ConstantTimeCompare(sum[:], m.token[:]) == 1
}

// Request counts one API request by its route pattern (not its path) and status code.
func (m *Metrics) Request(route string, status int, elapsed time.Duration) {
	m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(route).Observe(elapsed.Seconds())
}

// LoginFailed counts a login refused for a wrong user name or password.
func (m *Metrics) LoginFailed() { m.logins.Inc() }
