package webhooks

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/storage"
)

// aheadStore is a real store whose clock (Now) reads an hour ahead of this process's, as a
// database server's may; it notes the times ClaimDue is given.
type aheadStore struct {
	*storage.Store
	mu     sync.Mutex
	claims []time.Time
}

func (s *aheadStore) Now(ctx context.Context) (time.Time, error) {
	t, err := s.Store.Now(ctx)
	return t.Add(time.Hour), err
}

func (s *aheadStore) ClaimDue(ctx context.Context, now, lease time.Time, limit int) ([]storage.Delivery, error) {
	s.mu.Lock()
	s.claims = append(s.claims, now)
	s.mu.Unlock()
	return s.Store.ClaimDue(ctx, now, lease, limit)
}

// TestDelivererStoreClock: the deliverer claims, and records its attempts, on the store's
// clock, not on this process's: nodes that share a database share its clock, so a node whose
// own clock runs ahead never takes a delivery another node is attempting.
func TestDelivererStoreClock(t *testing.T) {
	ctx := context.Background()
	st, err := storage.Open(filepath.Join(t.TempDir(), "sluice.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got := make(chan string, 4)
	rx := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get(DeliveryHeader)
	}))
	defer rx.Close()
	hook := &storage.Webhook{Base: storage.Base{ID: storage.NewID(), Active: true}, Name: "rx", URL: rx.URL}
	if err := st.Create(ctx, hook); err != nil {
		t.Fatal(err)
	}
	id, err := st.AddDelivery(ctx, hook.ID, "ping", []byte(`{}`), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	store := &aheadStore{Store: st}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- New(store, Options{}).Run(runCtx) }()
	select {
	case d := <-got:
		if d != id {
			t.Errorf("received delivery %q, want %q", d, id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the ping was not delivered within 10 s")
	}
	var ds []storage.Delivery
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if ds, err = st.Deliveries(ctx, hook.ID); err == nil && len(ds) == 1 && ds[0].State == storage.DeliveryDelivered {
			break
		}
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].State != storage.DeliveryDelivered || time.Until(ds[0].LastAttempt) < 59*time.Minute {
		t.Errorf("deliveries %+v; want the ping delivered, its attempt at the store's time (an hour ahead)", ds)
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	if len(store.claims) == 0 {
		t.Fatal("ClaimDue never called")
	}
	for _, at := range store.claims {
		if time.Until(at) < 59*time.Minute {
			t.Errorf("ClaimDue given %v, this process's clock; want the store's, an hour ahead", at)
		}
	}
}
