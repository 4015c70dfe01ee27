package events

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/storage"
)

func openStore(t *testing.T) *storage.Store {
	t.Helper()
	st, err := storage.Open(filepath.Join(t.TempDir(), "sluice.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// runHub runs h until the test ends.
func runHub(t *testing.T, h *Hub) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = h.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

func waitID(t *testing.T, h *Hub, id int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for h.LastID() < id {
		if time.Now().After(deadline) {
			t.Fatalf("hub at event %d, want %d", h.LastID(), id)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSlowSubscriberIsClosed: a client that does not read is closed once its buffer is full,
// with the reason as the stream's last line; the publisher never waits and the other client
// gets every event.
func TestSlowSubscriberIsClosed(t *testing.T) {
	t.Parallel()
	h := New(openStore(t), Options{SubscriberBuffer: 8})
	runHub(t, h)
	slow, err := h.subscribe(filter{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Scan() // retry: line: the subscription is in place

	// The reading client reads each event before the next is sent; the slow one never reads.
	for i := range 100 {
		start := time.Now()
		h.Emit(Event{Type: State, Module: "MODULE_VOD", RecordID: "0123456789abcdef01234567", Fields: map[string]any{"state": "running"}})
		if d := time.Since(start); d > 50*time.Millisecond {
			t.Errorf("Emit took %v", d)
		}
		for sc.Scan() && !strings.HasPrefix(sc.Text(), "id: ") {
		}
		if sc.Text() != "id: "+strconv.Itoa(i+1) {
			t.Fatalf("reading client: line %q, want id %d", sc.Text(), i+1)
		}
	}
	n := 0
	for range slow.ch {
		n++
	}
	h.mu.Lock()
	reason := slow.reason
	h.mu.Unlock()
	if n != 8 || !strings.Contains(reason, "fell 8 events behind") {
		t.Fatalf("slow client: %d events queued, reason %q; want 8 and closed", n, reason)
	}
}

// TestSubscriberCap: one client past MaxSubscribers is answered 503.
func TestSubscriberCap(t *testing.T) {
	t.Parallel()
	h := New(openStore(t), Options{MaxSubscribers: 2})
	for range 2 {
		if _, err := h.subscribe(filter{}); err != nil {
			t.Fatal(err)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/events", nil))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("third client: %d %q", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/events?module=nope", nil))
	var e struct{ Error struct{ Code, Field string } }
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || rec.Code != http.StatusBadRequest || e.Error.Field != "module" {
		t.Fatalf("bad module: %d %s", rec.Code, rec.Body)
	}
}

// TestIDsGrowAcrossRestartsAndPruning: ids continue after a restart of the hub even when the
// history was pruned to nothing, and the history keeps at most HistoryMax events.
func TestIDsGrowAcrossRestartsAndPruning(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	ctx := context.Background()
	h := New(st, Options{HistoryMax: 5})
	hctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = h.Run(hctx); close(done) }()
	for range 12 {
		h.Emit(Event{Type: Created, Module: "MODULE_VOD", RecordID: "0123456789abcdef01234567"})
	}
	waitID(t, h, 12)
	cancel()
	<-done

	if _, err := st.PruneEvents(ctx, 5, time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	evs, err := st.EventsAfter(ctx, 0, 100)
	if err != nil || len(evs) != 5 || evs[0].ID != 8 || evs[4].ID != 12 {
		t.Fatalf("after pruning to 5: %d events from %v, %v", len(evs), evs, err)
	}
	if _, err := st.PruneEvents(ctx, 5, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if evs, _ := st.EventsAfter(ctx, 0, 100); len(evs) != 0 {
		t.Fatalf("pruning by age kept %d events", len(evs))
	}
	h2 := New(st, Options{})
	runHub(t, h2)
	h2.Emit(Event{Type: Removed, Module: "MODULE_VOD", RecordID: "0123456789abcdef01234567"})
	waitID(t, h2, 13)
	if evs, _ := st.EventsAfter(ctx, 0, 100); len(evs) != 1 || evs[0].ID != 13 || !strings.Contains(string(evs[0].Doc), `"event_id":13`) {
		t.Fatalf("after restart: %+v", evs)
	}
}

func TestFrameHasOneDataLine(t *testing.T) {
	e := Event{ID: 7, Type: State, Time: time.Unix(0, 0), Module: "MODULE_VOD", RecordID: "x", Name: "a\nb",
		Fields: map[string]any{"last_error": "line one\nline two"}}
	fr := string(frame(e.ID, e.Type, e.JSON()))
	if strings.Count(fr, "\n") != 4 || !strings.HasPrefix(fr, "id: 7\nevent: state\ndata: {") || !strings.HasSuffix(fr, "}\n\n") {
		t.Fatalf("frame %q", fr)
	}
}

// hungPruneStore is a store whose prune was sent on a connection to a database host that went
// away (a failover, a partition): no answer comes, and the statement ends only with its context.
type hungPruneStore struct{ *storage.Store }

func (hungPruneStore) PruneEvents(ctx context.Context, _ int, _ time.Time) (int64, error) {
	<-ctx.Done()
	return 0, ctx.Err()
}

// TestHungPruneKeepsEventsFlowing: a prune that gets no answer does not hold the hub up: the
// events emitted meanwhile are stored and fanned out once its bound has passed, not dropped
// from a full queue for as long as the connection lingers.
func TestHungPruneKeepsEventsFlowing(t *testing.T) {
	t.Parallel()
	h := New(hungPruneStore{openStore(t)}, Options{})
	runHub(t, h)
	h.Emit(Event{Type: Created, Module: "MODULE_VOD", RecordID: "0123456789abcdef01234567"})
	deadline := time.Now().Add(pruneTimeout + 5*time.Second)
	for h.LastID() < 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the event was not stored within %v of a hung prune", pruneTimeout+5*time.Second)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// awayAtStartStore is a store the hub cannot read its last event id from at first (a database
// briefly away while the server starts).
type awayAtStartStore struct {
	*storage.Store
	fails atomic.Int32
}

func (s *awayAtStartStore) LastEventID(ctx context.Context) (int64, error) {
	if s.fails.Add(-1) >= 0 {
		return 0, errors.New("connection refused")
	}
	return s.Store.LastEventID(ctx)
}

// TestHubStartsOnceTheStoreAnswers: a hub whose store does not answer when it starts tries
// again, and stores the events emitted meanwhile once it does, instead of ending for good.
func TestHubStartsOnceTheStoreAnswers(t *testing.T) {
	t.Parallel()
	st := &awayAtStartStore{Store: openStore(t)}
	st.fails.Store(2)
	h := New(st, Options{})
	h.Emit(Event{Type: Created, Module: "MODULE_VOD", RecordID: "0123456789abcdef01234567"})
	runHub(t, h)
	deadline := time.Now().Add(10 * time.Second)
	for h.LastID() < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the event was not stored after the store came back")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := st.fails.Load(); n >= 0 {
		t.Errorf("the hub read the last id %d times too few", n+1)
	}
}
