package stream

import (
	"slices"
	"strings"
	"sync"
)

// Registry holds named streams, such as those published to the SRT and RTMP server modules.
// Safe for concurrent use.
type Registry struct {
	opts Options

	mu      sync.Mutex
	streams map[string]*Stream
}

// NewRegistry returns an empty registry whose streams use opts.
func NewRegistry(opts Options) *Registry {
	return &Registry{opts: opts, streams: make(map[string]*Stream)}
}

// Get returns the stream named name, if there is one.
func (g *Registry) Get(name string) (*Stream, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, ok := g.streams[name]
	return s, ok
}

// GetOrCreate returns the stream named name, creating it if there is none (or if it was
// closed).
func (g *Registry) GetOrCreate(name string) *Stream {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.getOrCreate(name)
}

// Publish attaches a publisher to the stream named name, creating the stream if needed. It
// fails with ErrBusy while the stream has a publisher.
func (g *Registry) Publish(name string) (*Publisher, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.getOrCreate(name).Publish()
}

// Remove closes the stream named name and forgets it; it reports whether there was one.
func (g *Registry) Remove(name string) bool {
	g.mu.Lock()
	s, ok := g.streams[name]
	delete(g.streams, name)
	g.mu.Unlock()
	if ok {
		s.Close()
	}
	return ok
}

// List returns the streams, sorted by name.
func (g *Registry) List() []*Stream {
	g.mu.Lock()
	list := make([]*Stream, 0, len(g.streams))
	for _, s := range g.streams {
		list = append(list, s)
	}
	g.mu.Unlock()
	slices.SortFunc(list, func(a, b *Stream) int { return strings.Compare(a.name, b.name) })
	return list
}

// getOrCreate is GetOrCreate with g.mu held.
func (g *Registry) getOrCreate(name string) *Stream {
	s, ok := g.streams[name]
	if !ok || s.isClosed() {
		s = New(name, g.opts)
		g.streams[name] = s
	}
	return s
}
