package storage_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/storage"
)

// TestEventsHistory: events keep their ids and order; pruning keeps the newest and the recent
// ones; the last event id survives the pruning of every event (ids never go back).
func TestEventsHistory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	if id, err := s.LastEventID(ctx); id != 0 || err != nil {
		t.Fatalf("LastEventID of a new store = %d, %v", id, err)
	}
	var evs []storage.Event
	for i := int64(1); i <= 5; i++ {
		evs = append(evs, storage.Event{ID: i, Type: "vod_started", Time: at(time.Duration(i) * time.Minute),
			Module: storage.ModuleVOD, RecordID: "r1", Doc: []byte(`{"n":` + string(rune('0'+i)) + `}`)})
	}
	if err := s.AppendEvents(ctx, evs); err != nil {
		t.Fatal(err)
	}
	if id, err := s.LastEventID(ctx); id != 5 || err != nil {
		t.Errorf("LastEventID = %d, %v; want 5", id, err)
	}
	got, err := s.EventsAfter(ctx, 2, 2)
	if err != nil || len(got) != 2 || got[0].ID != 3 || got[1].ID != 4 {
		t.Fatalf("EventsAfter(2, 2) = %+v, %v", got, err)
	}
	if !got[0].Time.Equal(evs[2].Time) || string(got[0].Doc) != `{"n":3}` || got[0].Module != storage.ModuleVOD || got[0].RecordID != "r1" {
		t.Errorf("event 3 read back as %+v", got[0])
	}
	// Keep the 2 newest: 1 to 3 go.
	if n, err := s.PruneEvents(ctx, 2, at(0)); n != 3 || err != nil {
		t.Errorf("PruneEvents(keep 2) = %d, %v; want 3", n, err)
	}
	if id, err := s.OldestEventID(ctx); id != 4 || err != nil {
		t.Errorf("OldestEventID = %d, %v; want 4", id, err)
	}
	// Everything older than an hour after the last one: all go, the last id stays.
	if n, err := s.PruneEvents(ctx, 10, at(time.Hour)); n != 2 || err != nil {
		t.Errorf("PruneEvents(before) = %d, %v; want 2", n, err)
	}
	if id, err := s.LastEventID(ctx); id != 5 || err != nil {
		t.Errorf("LastEventID after pruning all = %d, %v; want 5", id, err)
	}
	if id, err := s.OldestEventID(ctx); id != 0 || err != nil {
		t.Errorf("OldestEventID of none = %d, %v", id, err)
	}
}

// TestWebhookOutbox: events queue a delivery for each active webhook that wants them; due
// deliveries are claimed once until their lease passes; attempts sum up in DeliveryStatus; old
// finished deliveries are pruned and stale pending ones given up.
func TestWebhookOutbox(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	all := &storage.Webhook{Base: storage.Base{ID: storage.NewID(), Active: true}, Name: "all", URL: "http://127.0.0.1:1/"}
	some := &storage.Webhook{Base: storage.Base{ID: storage.NewID(), Active: true}, Name: "stops",
		URL: "http://127.0.0.1:1/", EventTypes: []string{"vod_stopped"}}
	off := &storage.Webhook{Base: storage.Base{ID: storage.NewID()}, Name: "off", URL: "http://127.0.0.1:1/"}
	for _, w := range []*storage.Webhook{all, some, off} {
		if err := s.Create(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	t0 := at(0)
	if err := s.AppendEvents(ctx, []storage.Event{
		{ID: 1, Type: "vod_started", Time: t0, Module: storage.ModuleVOD, RecordID: "r1", Doc: []byte(`{"a":1}`)},
		{ID: 2, Type: "vod_stopped", Time: t0.Add(time.Second), Module: storage.ModuleVOD, RecordID: "r1", Doc: []byte(`{"a":2}`)},
	}); err != nil {
		t.Fatal(err)
	}
	for w, want := range map[*storage.Webhook]int{all: 2, some: 1, off: 0} {
		ds, err := s.Deliveries(ctx, w.ID)
		if err != nil || len(ds) != want {
			t.Errorf("webhook %s: %d deliveries, %v; want %d", w.Name, len(ds), err, want)
		}
	}
	if _, err := s.AddDelivery(ctx, storage.NewID(), "ping", []byte(`{}`), t0); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("AddDelivery to an unknown webhook: %v", err)
	}
	if next, ok, err := s.NextDeliveryAt(ctx); err != nil || !ok || !next.Equal(t0) {
		t.Errorf("NextDeliveryAt = %v, %v, %v; want %v", next, ok, err, t0)
	}

	lease := t0.Add(time.Minute)
	claimed, err := s.ClaimDue(ctx, t0.Add(time.Second), lease, 10)
	if err != nil || len(claimed) != 3 {
		t.Fatalf("ClaimDue = %d, %v; want 3", len(claimed), err)
	}
	if claimed[0].State != storage.DeliveryPending || claimed[0].EventID == 0 || len(claimed[0].Body) == 0 {
		t.Errorf("claimed %+v", claimed[0])
	}
	if again, err := s.ClaimDue(ctx, t0.Add(time.Second), lease, 10); err != nil || len(again) != 0 {
		t.Errorf("ClaimDue while leased = %d, %v; want 0", len(again), err)
	}
	if next, ok, err := s.NextDeliveryAt(ctx); err != nil || !ok || !next.Equal(lease) {
		t.Errorf("NextDeliveryAt while leased = %v, %v, %v; want %v", next, ok, err, lease)
	}

	var mine []storage.Delivery
	for _, d := range claimed {
		if d.WebhookID == all.ID {
			mine = append(mine, d)
		}
	}
	if len(mine) != 2 {
		t.Fatalf("claimed %d deliveries of webhook all, want 2", len(mine))
	}
	tA := t0.Add(2 * time.Second)
	if ok, err := s.FinishAttempt(ctx, mine[0], storage.DeliveryDelivered, tA, tA, ""); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if ok, err := s.FinishAttempt(ctx, mine[1], storage.DeliveryFailed, tA.Add(time.Second), tA, "HTTP 500"); err != nil || !ok {
		t.Fatal(ok, err)
	}
	st, err := s.DeliveryStatus(ctx, all.ID)
	if err != nil || st.Delivered != 1 || st.Failed != 1 || st.Pending != 0 || st.LastError != "HTTP 500" ||
		!st.LastAttempt.Equal(tA.Add(time.Second)) {
		t.Errorf("DeliveryStatus = %+v, %v", st, err)
	}
	// Finished before tA+1h go; the pending one of "stops", queued before the give-up time, fails.
	n, err := s.PruneDeliveries(ctx, t0.Add(time.Hour), tA.Add(time.Hour))
	if err != nil || n != 2 {
		t.Errorf("PruneDeliveries = %d, %v; want 2", n, err)
	}
	if st, err := s.DeliveryStatus(ctx, some.ID); err != nil || st.Failed != 1 || st.Pending != 0 ||
		st.LastError != "not delivered before the retry limit" {
		t.Errorf("given-up webhook: %+v, %v", st, err)
	}
	// Removing a webhook removes its outbox.
	if err := s.Delete(ctx, storage.ModuleWebhooks, some.ID); err != nil {
		t.Fatal(err)
	}
	if ds, err := s.Deliveries(ctx, some.ID); err != nil || len(ds) != 0 {
		t.Errorf("deliveries of a removed webhook: %d, %v", len(ds), err)
	}
}

// TestWebhookOutboxStoreClock: the store's clock is a real one (the database server's on
// PostgreSQL); an event, or a ping, stamped by a node whose clock runs an hour ahead of it is
// due at once on it, keeping its own time as its creation.
func TestWebhookOutboxStoreClock(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	now, err := s.Now(ctx)
	if err != nil || time.Until(now).Abs() > 5*time.Second {
		t.Fatalf("Now = %v, %v; want about %v", now, err, time.Now())
	}
	hook := &storage.Webhook{Base: storage.Base{ID: storage.NewID(), Active: true}, Name: "all", URL: "http://127.0.0.1:1/"}
	if err := s.Create(ctx, hook); err != nil {
		t.Fatal(err)
	}
	ahead := now.Add(time.Hour).UTC().Truncate(time.Millisecond)
	if err := s.AppendEvents(ctx, []storage.Event{
		{ID: 1, Type: "vod_started", Time: ahead, Module: storage.ModuleVOD, RecordID: "r1", Doc: []byte(`{}`)},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddDelivery(ctx, hook.ID, "ping", []byte(`{}`), ahead); err != nil {
		t.Fatal(err)
	}
	if now, err = s.Now(ctx); err != nil {
		t.Fatal(err)
	}
	claimed, err := s.ClaimDue(ctx, now, now.Add(15*time.Second), 10)
	if err != nil || len(claimed) != 2 {
		t.Fatalf("ClaimDue on the store's clock = %d, %v; want the event's and the ping's deliveries", len(claimed), err)
	}
	for _, d := range claimed {
		if !d.Created.Equal(ahead) {
			t.Errorf("delivery %s created %v, want the maker's %v", d.Type, d.Created, ahead)
		}
	}
}

// TestEventsRenumbered: a batch whose ids another writer (a cluster node on the same database)
// took meanwhile is stored after the highest id, its documents made again for the new ids; the
// caller sees the ids stored.
func TestEventsRenumbered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	doc := func(id int64) []byte { return []byte(`{"event_id":` + strconv.FormatInt(id, 10) + `}`) }
	batch := func() []storage.Event {
		var evs []storage.Event
		for i := int64(1); i <= 2; i++ {
			evs = append(evs, storage.Event{ID: i, Type: "vod_started", Time: at(time.Duration(i) * time.Minute),
				Module: storage.ModuleVOD, RecordID: "r1", Doc: doc(i), Encode: doc})
		}
		return evs
	}
	if err := s.AppendEvents(ctx, batch()); err != nil {
		t.Fatal(err)
	}
	other := batch() // numbered from the same last id, as another node would
	if err := s.AppendEvents(ctx, other); err != nil {
		t.Fatal(err)
	}
	if other[0].ID != 3 || other[1].ID != 4 {
		t.Errorf("renumbered ids %d, %d; want 3, 4", other[0].ID, other[1].ID)
	}
	got, err := s.EventsAfter(ctx, 0, 10)
	if err != nil || len(got) != 4 {
		t.Fatalf("EventsAfter = %+v, %v", got, err)
	}
	for i, e := range got {
		if e.ID != int64(i+1) || string(e.Doc) != string(doc(e.ID)) {
			t.Errorf("event %d stored as id %d, doc %s", i+1, e.ID, e.Doc)
		}
	}
}

// queuedPing is a store with a webhook w and one ping queued for it at at(0).
func queuedPing(t *testing.T) (*storage.Store, *storage.Webhook) {
	t.Helper()
	ctx := context.Background()
	s := openStore(t)
	w := &storage.Webhook{Base: storage.Base{ID: storage.NewID(), Active: true}, Name: "w", URL: "http://127.0.0.1:1/"}
	if err := s.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddDelivery(ctx, w.ID, "ping", []byte(`{}`), at(0)); err != nil {
		t.Fatal(err)
	}
	return s, w
}

// claimOne claims the one delivery due at now until lease.
func claimOne(t *testing.T, s *storage.Store, now, lease time.Time) storage.Delivery {
	t.Helper()
	claimed, err := s.ClaimDue(context.Background(), now, lease, 1)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("ClaimDue at %v = %d, %v; want one", now, len(claimed), err)
	}
	return claimed[0]
}

// TestFinishAttemptOddError: an attempt's error that quotes bytes that are not UTF-8 (a
// receiver's page in another encoding) is recorded on both backends: PostgreSQL's text refuses
// invalid UTF-8 and NUL, and a refused write would leave the attempt uncounted.
func TestFinishAttemptOddError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, w := queuedPing(t)
	claimed := claimOne(t, s, at(1), at(20))
	if ok, err := s.FinishAttempt(ctx, claimed, storage.DeliveryPending, at(1), at(60), "HTTP 500: donn\xe9es \x00 refus\xe9es"); err != nil || !ok {
		t.Fatalf("FinishAttempt: %v, %v", ok, err)
	}
	ds, err := s.Deliveries(ctx, w.ID)
	if err != nil || len(ds) != 1 || ds[0].Attempts != 1 || !strings.HasPrefix(ds[0].LastError, "HTTP 500: donn") {
		t.Errorf("deliveries %+v, %v; want the attempt recorded with its error", ds, err)
	}
}

// TestFinishAttemptAfterClaimLost: an attempt that outlasted its claim (the lease ran out and
// another claim took the delivery) is not recorded over the later claim's outcome: a late
// "pending" written over a "delivered" would send the event again.
func TestFinishAttemptAfterClaimLost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, w := queuedPing(t)
	late := claimOne(t, s, at(1), at(20))
	// The first claim's lease ran out: another node claims and delivers.
	again := claimOne(t, s, at(21), at(40))
	if ok, err := s.FinishAttempt(ctx, again, storage.DeliveryDelivered, at(22), at(22), ""); err != nil || !ok {
		t.Fatalf("the second claim's outcome: %v, %v", ok, err)
	}
	if ok, err := s.FinishAttempt(ctx, late, storage.DeliveryPending, at(23), at(83), "timeout"); err != nil || ok {
		t.Fatalf("the first claim's late outcome: recorded %v, %v; want not recorded", ok, err)
	}
	ds, err := s.Deliveries(ctx, w.ID)
	if err != nil || len(ds) != 1 || ds[0].State != storage.DeliveryDelivered || ds[0].Attempts != 1 || ds[0].LastError != "" {
		t.Errorf("deliveries %+v, %v; want the second claim's delivery kept", ds, err)
	}
}
