package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/sluicemedia/sluice/api"
	"github.com/sluicemedia/sluice/internal/httpserve"
	"github.com/sluicemedia/sluice/internal/metrics"
	"github.com/sluicemedia/sluice/internal/supervisor"
)

// metricsShutdownTimeout bounds how long a scrape under way may finish when the server stops
// (2 s).
const metricsShutdownTimeout = 2 * time.Second

// serverMetrics is the metrics of a server, and where they are served.
type serverMetrics struct {
	m       *metrics.Metrics // nil: metrics off
	ownAddr bool             // served on --metrics-addr, not the API port
	port    int              // the --metrics-addr port; 0 when not served there
}

// startMetrics builds the metrics when --metrics-token is set, and serves them on
// --metrics-addr when that is set; stop closes that port.
func startMetrics(cfg Config, src metrics.Source, log *slog.Logger) (*serverMetrics, func(), error) {
	sm := &serverMetrics{}
	if cfg.MetricsToken == "" {
		return sm, func() {}, nil
	}
	sm.m = metrics.New(metrics.Options{Token: cfg.MetricsToken, Source: src, Children: supervisor.Children})
	if cfg.MetricsAddr == "" {
		return sm, func() {}, nil
	}
	sm.ownAddr = true
	ln, err := net.Listen("tcp", cfg.MetricsAddr)
	if err != nil {
		return nil, nil, fmt.Errorf("metrics: listen on %s (--metrics-addr): %w", cfg.MetricsAddr, err)
	}
	sm.port = ln.Addr().(*net.TCPAddr).Port
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", sm.m)
	srv := httpserve.New(mux, httpDefaults, nil, log.With("listener", "metrics"))
	done := make(chan error, 1)
	go func() { done <- srv.Serve(guardMetrics(ln, log)) }()
	log.Info("metrics served", "addr", ln.Addr().String())
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), metricsShutdownTimeout)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			srv.Close()
		}
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("metrics port", "err", err)
		}
	}
	return sm, stop, nil
}

// onAPIPort is the /metrics handler of the API port: nil when metrics are off or served on
// their own port.
func (sm *serverMetrics) onAPIPort() http.Handler {
	if sm.m == nil || sm.ownAddr {
		return nil
	}
	return sm.m
}

// observer counts the API's requests; nil when metrics are off.
func (sm *serverMetrics) observer() api.Observer {
	if sm.m == nil {
		return nil
	}
	return sm.m
}
