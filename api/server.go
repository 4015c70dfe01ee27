// Package api is sluice's HTTP API: a chi router with token authentication, one handler file
// per module, validation of every request body, the error bodies of API.md and an OpenAPI
// document built from the same route table as the router.
package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
)

// server holds what the handlers share.
type server struct {
	cfg    Config
	store  Store
	procs  Processes
	utils  Utils
	log    *slog.Logger
	now    func() time.Time
	ttl    time.Duration
	secret []byte
	// revs is the token revocation state, kept in memory.
	revs   *revocations
	mux    *chi.Mux
	routes []route

	// Login: the attempt limiter with its per-address and per-user-name limits, the pool that
	// runs password checks, the hash checked for unknown user names, and rate-limited logs.
	limiter          *loginLimiter
	maxAddr, maxUser int
	hashes           *hashPool
	dummy            string
	failLog, busyLog rateLog

	// inputs is the policy of INPUT_TYPE_OTHER addresses.
	inputs InputPolicy
	// urlChecks check protocol options in stream addresses (Config.URLChecks).
	urlChecks map[string]func(string, bool) error

	// writes runs record changes a few at a time (Config.WriteWorkers).
	writes writeGate

	// memDownloads count the downloads of each memory recording under way (downloadMemory).
	memDownloads idCounts
	// speedtests counts the speed-test peer's downloads and uploads under way (speedtestEnter).
	speedtests idCounts

	openAPIOnce sync.Once
	openAPIJSON []byte
	openAPIErr  error
}

// New builds the API router. It loads (or creates) the token signing secret from the store.
func New(cfg Config) (http.Handler, error) {
	s, err := newServer(cfg)
	if err != nil {
		return nil, err
	}
	return s.mux, nil
}

// newServer builds the server behind New.
func newServer(cfg Config) (*server, error) {
	if cfg.Store == nil || cfg.Procs == nil {
		return nil, errors.New("api: Config.Store and Config.Procs are required")
	}
	s := &server{cfg: cfg, store: cfg.Store, procs: cfg.Procs, utils: cfg.Utils, log: cfg.Logger, now: cfg.Now, ttl: cfg.TokenTTL}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.ttl <= 0 {
		s.ttl = DefaultTokenTTL
	}
	s.maxAddr, s.maxUser = orDefault(cfg.LoginFailures, DefaultLoginFailures), orDefault(cfg.LoginUserFailures, DefaultLoginUserFailures)
	window := cfg.LoginWindow
	if window <= 0 {
		window = DefaultLoginWindow
	}
	s.limiter = newLoginLimiter(window)
	if err := CheckInputSchemes(cfg.InputSchemes); err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	s.inputs = InputPolicy{Schemes: cfg.InputSchemes, AllowLocalFiles: cfg.AllowLocalFiles}
	s.urlChecks = cfg.URLChecks
	workers := orDefault(cfg.LoginWorkers, DefaultLoginWorkers())
	queue := cfg.LoginQueue
	if queue == 0 {
		queue = DefaultLoginQueuePerWorker * workers
	}
	s.hashes = newHashPool(workers, queue)
	s.writes = newWriteGate(orDefault(cfg.WriteWorkers, DefaultWriteWorkers()))
	dummy, err := dummyHash()
	if err != nil {
		return nil, err
	}
	s.dummy = dummy
	key, err := loadSecret(context.Background(), cfg.Store)
	if err != nil {
		return nil, err
	}
	s.secret = key
	s.revs = newRevocations(cfg.Store, s.now, cfg.RevocationRecheck)
	s.routes = s.routeTable()
	s.mux = s.router()
	return s, nil
}

// orDefault is v, or def when v is not positive.
func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// router registers every route of the table on a new chi mux.
func (s *server) router() *chi.Mux {
	r := chi.NewRouter()
	r.Use(s.observe, s.recoverer)
	r.NotFound(func(w http.ResponseWriter, req *http.Request) {
		s.fail(w, req, errNotFound("no route %s %s", req.Method, req.URL.Path))
	})
	r.MethodNotAllowed(s.methodNotAllowed)
	for _, rt := range s.routes {
		var h http.Handler = rt.handler
		if rt.writes() {
			h = s.writes.wrap(h)
		}
		switch rt.auth {
		case authToken:
			h = s.requireToken(false)(h)
		case authTokenOrQuery:
			h = s.requireToken(true)(h)
		}
		r.Method(rt.method, rt.pattern, h)
	}
	return r
}

var allMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodOptions}

func (s *server) methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	for _, m := range allMethods {
		if s.mux.Match(chi.NewRouteContext(), m, r.URL.Path) {
			w.Header().Add("Allow", m)
		}
	}
	s.fail(w, r, &apiError{Status: http.StatusMethodNotAllowed, Code: CodeMethodNotAllowed,
		Message: "method " + r.Method + " is not allowed on " + r.URL.Path})
}

// recoverer answers a panic with 500 INTERNAL and logs it with its stack.
func (s *server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
					panic(v)
				}
				s.log.Error("handler panic", "method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
				s.fail(w, r, &apiError{Status: http.StatusInternalServerError, Code: CodeInternal, Message: "internal error; see the server log"})
			}
		}()
		next.ServeHTTP(w, r)
	})
}
