package api

import (
	"context"
	"fmt"
	"net/http"
	"sort"
)

// errNoUtils is answered when the server was built without utilities.
var errNoUtils = fmt.Errorf("system utilities are not configured: %w", ErrNotAvailable)

func (s *server) utilStat(w http.ResponseWriter, r *http.Request) {
	s.utility(w, r, func(ctx context.Context) (any, error) { return s.utils.ServerStat(ctx) })
}

func (s *server) speedTest(w http.ResponseWriter, r *http.Request) {
	s.utility(w, r, func(ctx context.Context) (any, error) { return s.utils.SpeedTest(ctx) })
}

// utility answers a Utils result, with its timestamps in TimeFormat.
func (s *server) utility(w http.ResponseWriter, r *http.Request, call func(context.Context) (any, error)) {
	if _, err := readBody(r); err != nil {
		s.fail(w, r, err)
		return
	}
	if s.utils == nil {
		s.fail(w, r, errNoUtils)
		return
	}
	v, err := call(r.Context())
	if err == nil {
		v, err = normalizeTimes(v)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *server) listeningPorts(w http.ResponseWriter, r *http.Request) {
	s.utility(w, r, func(ctx context.Context) (any, error) {
		keys, err := s.utils.ListeningPorts(ctx)
		if err != nil {
			return nil, err
		}
		sort.Slice(keys, func(i, j int) bool {
			if keys[i].Port != keys[j].Port {
				return keys[i].Port < keys[j].Port
			}
			return keys[i].Transport < keys[j].Transport
		})
		out := make([]map[string]any, 0, len(keys))
		for _, k := range keys {
			out = append(out, map[string]any{"port": k.Port, "transport": k.Transport})
		}
		return out, nil
	})
}

// portDocs renders the port claims for /api/ports/getAll.
func (s *server) portDocs(r *http.Request) ([]map[string]any, error) {
	claims, err := s.store.PortClaims(r.Context())
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, 0, len(claims))
	for _, c := range claims {
		doc, err := toDoc(c)
		if err != nil {
			return nil, err
		}
		doc["created"] = FormatTime(c.Created)
		out = append(out, doc)
	}
	return out, nil
}

func (s *server) healthz(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Ready != nil && !s.cfg.Ready() {
		s.fail(w, r, &apiError{Status: http.StatusServiceUnavailable, Code: CodeUnavailable, Message: "the server is starting"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok"})
}

func (s *server) playback(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Playback == nil {
		s.fail(w, r, errNotFound("playback is not enabled on this server"))
		return
	}
	s.cfg.Playback.ServeHTTP(w, r)
}

func (s *server) console(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Console == nil {
		s.fail(w, r, errNotFound("the web console is not enabled on this server"))
		return
	}
	s.cfg.Console.ServeHTTP(w, r)
}
