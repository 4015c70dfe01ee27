package api

import (
	"io"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
)

// Observer counts what the API serves (internal/metrics implements it). Its methods must
// return quickly: they run on every request.
type Observer interface {
	// Request is called once a request was answered, with its route pattern (never its path:
	// "unmatched" when no route matched), its status and how long it took.
	Request(route string, status int, elapsed time.Duration)
	// LoginFailed is called for each login refused for a wrong user name or password.
	LoginFailed()
}

// routeUnmatched is the route label of a request no route matched.
const routeUnmatched = "unmatched"

// observe reports each request to the Observer by route pattern and status.
func (s *server) observe(next http.Handler) http.Handler {
	if s.cfg.Observer == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		route := routeUnmatched
		if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
			route = rc.RoutePattern()
		}
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		s.cfg.Observer.Request(route, status, time.Since(start))
	})
}

// statusWriter remembers the status a handler answered.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// ReadFrom keeps the underlying writer's ReadFrom (sendfile for downloads).
func (w *statusWriter) ReadFrom(src io.Reader) (int64, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if rf, ok := w.ResponseWriter.(io.ReaderFrom); ok {
		return rf.ReadFrom(src)
	}
	return io.Copy(w.ResponseWriter, src)
}

// Flush sends what is buffered.
func (w *statusWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// metrics serves the Prometheus exposition, which checks its own token (--metrics-token);
// without a metrics handler the route answers 404.
func (s *server) metrics(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Metrics == nil {
		s.fail(w, r, errNotFound("metrics are off on this port (set --metrics-token; with --metrics-addr they are served there)"))
		return
	}
	s.cfg.Metrics.ServeHTTP(w, r)
}
