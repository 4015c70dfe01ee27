package events

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicemedia/sluice/internal/opt"
	"github.com/sluicemedia/sluice/storage"
)

// Store is what the hub needs of the record store; *storage.Store satisfies it.
type Store interface {
	LastEventID(ctx context.Context) (int64, error)
	AppendEvents(ctx context.Context, evs []storage.Event) error
	EventsAfter(ctx context.Context, after int64, limit int) ([]storage.Event, error)
	OldestEventID(ctx context.Context) (int64, error)
	PruneEvents(ctx context.Context, keep int, before time.Time) (int64, error)
}

// Defaults of Options.
const (
	DefaultHistoryMax       = 10000
	DefaultHistoryAge       = 24 * time.Hour
	DefaultMaxSubscribers   = 64
	DefaultSubscriberBuffer = 256
	DefaultKeepAlive        = 15 * time.Second
	DefaultStatsEvery       = 10 * time.Second
	// queueSize is how many events may wait to be stored; past it Emit drops (and counts).
	queueSize = 4096
	// batchMax is the most events stored in one transaction.
	batchMax = 256
	// pruneEvery is how often the history is cut to its bounds.
	pruneEvery = time.Minute
	// pruneTimeout bounds one prune: it runs on the loop that stores the events.
	pruneTimeout = 10 * time.Second
)

// Options configure a Hub. Zero values take the defaults.
type Options struct {
	// HistoryMax is how many events the history keeps, the newest. Default 10 000.
	HistoryMax int
	// HistoryAge is how long the history keeps an event. Default 24 h.
	HistoryAge time.Duration
	// MaxSubscribers caps the event stream's concurrent clients; one more answers 503.
	// Default 64.
	MaxSubscribers int
	// SubscriberBuffer is how many events may wait for one client; a client that falls that
	// far behind is closed (it may reconnect with Last-Event-ID). Default 256.
	SubscriberBuffer int
	// KeepAlive is how often an idle stream gets a comment line. Default 15 s.
	KeepAlive time.Duration
	// StatsEvery is the period of the server_stats event, sent to the stream's clients only
	// (not stored). Default 10 s.
	StatsEvery time.Duration
	// Stats returns the server statistic for server_stats (nil: no such event).
	Stats func(ctx context.Context) (any, error)
	// OnStored is called after each batch of events is stored (the webhook deliverer's wake-up).
	OnStored func()
	// Log receives the hub's messages. Default slog.Default().
	Log *slog.Logger
}

func (o Options) withDefaults() Options {
	opt.Positive(&o.HistoryMax, DefaultHistoryMax)
	opt.Positive(&o.HistoryAge, DefaultHistoryAge)
	opt.Positive(&o.MaxSubscribers, DefaultMaxSubscribers)
	opt.Positive(&o.SubscriberBuffer, DefaultSubscriberBuffer)
	opt.Positive(&o.KeepAlive, DefaultKeepAlive)
	opt.Positive(&o.StatsEvery, DefaultStatsEvery)
	opt.Zero(&o.Log, slog.Default())
	return o
}

// Hub numbers, stores and fans out events. Emit never blocks; Run does the work.
type Hub struct {
	store Store
	opts  Options
	log   *slog.Logger
	queue chan Event
	// dropped counts events Emit could not queue; logged by Run.
	dropped atomic.Int64

	mu     sync.Mutex
	subs   map[*subscriber]struct{}
	last   int64 // id of the last event stored and fanned out
	closed bool  // Close ran: no new subscriber
}

// New returns a Hub over store; call Run.
func New(store Store, opts Options) *Hub {
	opts = opts.withDefaults()
	return &Hub{store: store, opts: opts, log: opts.Log, queue: make(chan Event, queueSize), subs: map[*subscriber]struct{}{}}
}

// Emit queues e to be numbered, stored and fanned out. It never blocks: when the queue is
// full the event is dropped and counted (logged by Run). A zero Time is now.
func (h *Hub) Emit(e Event) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	select {
	case h.queue <- e:
	default:
		h.dropped.Add(1)
	}
}

// Run stores and fans out the queued events until ctx ends, then stores what is still queued
// and returns. It prunes the history to its bounds every minute and sends server_stats.
func (h *Hub) Run(ctx context.Context) error {
	last, err := h.lastStored(ctx)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.last = last
	h.mu.Unlock()
	h.prune(ctx)
	prune := time.NewTicker(pruneEvery)
	defer prune.Stop()
	stats := time.NewTicker(h.opts.StatsEvery)
	defer stats.Stop()
	var statsBusy atomic.Bool
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case e := <-h.queue:
			h.flush(e)
		case <-prune.C:
			h.prune(ctx)
			if n := h.dropped.Swap(0); n > 0 {
				h.log.Warn("events dropped: the event queue was full", "count", n, "queue", queueSize)
			}
		case <-stats.C:
			if h.opts.Stats != nil && h.subscribers() > 0 && statsBusy.CompareAndSwap(false, true) {
				wg.Go(func() {
					defer statsBusy.Store(false)
					h.sendStats(ctx)
				})
			}
		case <-ctx.Done():
			for {
				select {
				case e := <-h.queue:
					h.flush(e)
				default:
					return nil
				}
			}
		}
	}
}

// flush stores first and what else is queued (up to batchMax), then fans them out.
func (h *Hub) flush(first Event) {
	batch := []Event{first}
more:
	for len(batch) < batchMax {
		select {
		case e := <-h.queue:
			batch = append(batch, e)
		default:
			break more
		}
	}
	h.mu.Lock()
	next := h.last
	h.mu.Unlock()
	rows := make([]storage.Event, len(batch))
	frames := make([][]byte, len(batch))
	for i := range batch {
		next++
		batch[i].ID = next
		e := batch[i]
		rows[i] = storage.Event{ID: next, Type: e.Type, Time: e.Time, Module: storage.Module(e.Module),
			RecordID: e.RecordID, Doc: e.JSON(), Encode: func(id int64) []byte { e.ID = id; return e.JSON() }}
	}
	// Storing must finish even while the server stops: the last events (stopped, removed)
	// are the ones a client reconnecting after a restart asks for.
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	err := h.store.AppendEvents(sctx, rows)
	cancel()
	if err != nil {
		h.log.Error("events not stored (sent live only; not in the history, not to webhooks)", "count", len(rows),
			"first_id", rows[0].ID, "error", err)
	}
	// The store renumbers a batch whose ids another cluster node took (never on one node).
	for i := range batch {
		batch[i].ID = rows[i].ID
		frames[i] = frame(rows[i].ID, batch[i].Type, rows[i].Doc)
	}
	next = max(next, rows[len(rows)-1].ID)
	h.mu.Lock()
	for i, e := range batch {
		h.fanout(e, frames[i])
	}
	h.last = next
	h.mu.Unlock()
	if err == nil && h.opts.OnStored != nil {
		h.opts.OnStored()
	}
}

// fanout hands one event's frame to every subscriber that wants it. h.mu held.
func (h *Hub) fanout(e Event, fr []byte) {
	for s := range h.subs {
		if !s.f.match(e.Type, e.Module, e.RecordID) {
			continue
		}
		select {
		case s.ch <- fr:
		default:
			h.dropLocked(s, "the client fell "+itoa(int64(cap(s.ch)))+" events behind; reconnect with Last-Event-ID to resume from the history")
		}
	}
}

// sendStats sends one server_stats event to the stream's clients.
func (h *Hub) sendStats(ctx context.Context) {
	st, err := h.opts.Stats(ctx)
	if err != nil {
		h.log.Debug("server_stats event skipped", "error", err)
		return
	}
	e := Event{Type: ServerStats, Time: time.Now(), Module: ServerModule, RecordID: ServerID, Name: ServerName,
		Fields: map[string]any{"stats": st}}
	fr := frame(0, e.Type, e.JSON())
	h.mu.Lock()
	h.fanout(e, fr)
	h.mu.Unlock()
}

// lastStored reads the id of the last event stored, trying again (every second, then up to
// every 30 s) while the store does not answer: a database that is briefly away when the server
// starts must not leave it without events for the rest of its run. Events emitted meanwhile
// wait in the queue. It returns an error only when ctx ends.
func (h *Hub) lastStored(ctx context.Context) (int64, error) {
	wait := time.Second
	for {
		sctx, cancel := context.WithTimeout(ctx, pruneTimeout)
		last, err := h.store.LastEventID(sctx)
		cancel()
		if err == nil {
			return last, nil
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		h.log.Warn("events: reading the last event id; trying again", "in", wait, "error", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, 30*time.Second)
	}
}

func (h *Hub) prune(ctx context.Context) {
	// Bounded: a statement sent to a database host that went away may otherwise wait for as
	// long as the kernel keeps the connection (many minutes), and no event is stored meanwhile.
	ctx, cancel := context.WithTimeout(ctx, pruneTimeout)
	defer cancel()
	n, err := h.store.PruneEvents(ctx, h.opts.HistoryMax, time.Now().Add(-h.opts.HistoryAge))
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			h.log.Warn("pruning the event history", "error", err)
		}
		return
	}
	if n > 0 {
		h.log.Debug("event history pruned", "events", n)
	}
}

func (h *Hub) subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// SetStats sets Options.Stats; call it before Run.
func (h *Hub) SetStats(f func(ctx context.Context) (any, error)) { h.opts.Stats = f }

// Close ends every subscriber's stream and refuses new ones (the server is stopping).
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.subs {
		h.dropLocked(s, "the server is shutting down")
	}
}

// LastID is the id of the last event stored and fanned out.
func (h *Hub) LastID() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last
}
