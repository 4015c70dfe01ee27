package app

import (
	"expvar"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"

	"github.com/sluicemedia/sluice/internal/httpserve"
)

// serveDebug serves the pprof handlers, and the runtime's memory statistics as JSON at
// /debug/vars (expvar: a read of them stops the world for microseconds, where a heap profile in
// text costs milliseconds of symbolising), on addr (--debug-addr) until the returned stop is
// called.
// It is a separate listener so that profiles are never reachable through the API port.
func serveDebug(addr string, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("debug listener on %s (--debug-addr): %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.Handle("/debug/vars", expvar.Handler())
	srv := httpserve.New(mux, httpDefaults, nil, log)
	go func() { _ = srv.Serve(ln) }()
	log.Info("pprof profiles", "url", "http://"+ln.Addr().String()+"/debug/pprof/")
	return func() { srv.Close() }, nil
}
