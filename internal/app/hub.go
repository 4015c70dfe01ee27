package app

import (
	"log/slog"
	"sync"

	"github.com/sluicemedia/sluice/internal/stream"
)

// hub keeps the stream registry of each server module, for as long as the server runs: a
// module's restart keeps its registry, so processes reading from it keep their Streams.
type hub struct {
	opts stream.Options
	mu   sync.Mutex
	regs map[string]*stream.Registry // by server module id
}

func newHub(opts stream.Options) *hub {
	return &hub{opts: opts, regs: map[string]*stream.Registry{}}
}

// registry returns the registry of the server module with this id.
func (h *hub) registry(serverID string) *stream.Registry { return h.registryLog(serverID, nil) }

// registryLog is registry; a registry it creates logs to log (the server module's logger,
// with its module, id and name) when that is set. Server modules start first (bootOrder), so
// their registry is made with their logger.
func (h *hub) registryLog(serverID string, log *slog.Logger) *stream.Registry {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.regs[serverID]
	if r == nil {
		o := h.opts
		if log != nil {
			o.Log = log
		}
		r = stream.NewRegistry(o)
		h.regs[serverID] = r
	}
	return r
}
