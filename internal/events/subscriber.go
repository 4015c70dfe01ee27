package events

import (
	"errors"
	"strconv"
	"strings"
)

// subscriber is one client of the event stream: its filter and its bounded queue of frames.
type subscriber struct {
	f  filter
	ch chan []byte
	// start is the id of the last event fanned out before it subscribed: the history
	// replays up to it, the queue holds what came after.
	start int64
	// reason says why the hub closed ch; set before the close, under the hub's lock.
	reason string
}

// filter selects events by type, module and record id; an empty field matches all.
type filter struct {
	types  map[string]bool
	module string
	id     string
}

func (f filter) match(typ, module, id string) bool {
	if len(f.types) > 0 && !f.types[typ] {
		return false
	}
	if f.module != "" && f.module != module {
		return false
	}
	return f.id == "" || f.id == id
}

// errTooMany and errClosed are what subscribe refuses with.
var (
	errTooMany = errors.New("too many event stream clients")
	errClosed  = errors.New("the server is shutting down")
)

// subscribe registers a subscriber with filter f.
func (h *Hub) subscribe(f filter) (*subscriber, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errClosed
	}
	if len(h.subs) >= h.opts.MaxSubscribers {
		return nil, errTooMany
	}
	s := &subscriber{f: f, ch: make(chan []byte, h.opts.SubscriberBuffer), start: h.last}
	h.subs[s] = struct{}{}
	return s, nil
}

// unsubscribe forgets s (it may have been dropped already).
func (h *Hub) unsubscribe(s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[s]; ok {
		delete(h.subs, s)
		close(s.ch)
	}
}

// dropLocked closes s's queue with reason. h.mu held.
func (h *Hub) dropLocked(s *subscriber, reason string) {
	if _, ok := h.subs[s]; !ok {
		return
	}
	delete(h.subs, s)
	s.reason = reason
	close(s.ch)
	h.log.Info("event stream client closed", "reason", reason)
}

// frame is one event in the text/event-stream format; id 0 writes no id line (the event is
// not in the history, so a client's Last-Event-ID keeps pointing at the last one that is).
func frame(id int64, typ string, data []byte) []byte {
	var b strings.Builder
	b.Grow(len(data) + len(typ) + 40)
	if id > 0 {
		b.WriteString("id: ")
		b.WriteString(itoa(id))
		b.WriteByte('\n')
	}
	b.WriteString("event: ")
	b.WriteString(typ)
	b.WriteString("\ndata: ")
	// JSON from encoding/json has no raw newline; a data line must not have one.
	b.Write(data)
	b.WriteString("\n\n")
	return []byte(b.String())
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
