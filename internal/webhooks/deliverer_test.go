package webhooks

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sluicemedia/sluice/internal/testutil/pgtest"
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

// pingReceiver is a temporary store holding one webhook (hook) to a real receiver on loopback
// and a ping queued for it (delivery id); got has the delivery id of each POST the receiver
// gets. All end with the test.
func pingReceiver(t *testing.T) (st *storage.Store, hook *storage.Webhook, id string, got chan string) {
	t.Helper()
	st, err := storage.Open(filepath.Join(t.TempDir(), "sluice.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	got = make(chan string, 4)
	rx := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get(DeliveryHeader)
	}))
	t.Cleanup(rx.Close)
	hook = &storage.Webhook{Base: storage.Base{ID: storage.NewID(), Active: true}, Name: "rx", URL: rx.URL, Secret: "s"}
	ctx := context.Background()
	if err := st.Create(ctx, hook); err != nil {
		t.Fatal(err)
	}
	if id, err = st.AddDelivery(ctx, hook.ID, "ping", []byte(`{}`), time.Now()); err != nil {
		t.Fatal(err)
	}
	return st, hook, id, got
}

// TestDelivererStoreClock: the deliverer claims, and records its attempts, on the store's
// clock, not on this process's: nodes that share a database share its clock, so a node whose
// own clock runs ahead never takes a delivery another node is attempting.
func TestDelivererStoreClock(t *testing.T) {
	ctx := context.Background()
	st, hook, id, got := pingReceiver(t)
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
	var err error
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

// TestDelivererOddAnswerPostgres: a receiver's failed answer whose quoted start is not valid
// UTF-8 (a Latin-1 page, or a UTF-8 one whose 200th byte falls inside a character) is still
// recorded on a PostgreSQL store: the attempt is counted, backed off and its error kept,
// rather than the write failing and the delivery being tried again at every lease.
func TestDelivererOddAnswerPostgres(t *testing.T) {
	ctx := context.Background()
	url := pgtest.StartTest(t).NewDatabase(t)
	st, err := storage.OpenPostgres(url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for name, body := range map[string]string{
		"cut":    strings.Repeat("x", errExcerpt-1) + "é and more",
		"latin1": "erreur: donn\xe9es refus\xe9es",
	} {
		t.Run(name, func(t *testing.T) {
			rx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = io.WriteString(w, body)
			}))
			defer rx.Close()
			hook := &storage.Webhook{Base: storage.Base{ID: storage.NewID(), Active: true}, Name: "rx-" + name, URL: rx.URL, Secret: "s"}
			if err := st.Create(ctx, hook); err != nil {
				t.Fatal(err)
			}
			if _, err := st.AddDelivery(ctx, hook.ID, "ping", []byte(`{}`), time.Now()); err != nil {
				t.Fatal(err)
			}
			runCtx, stop := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				done <- New(st, Options{RetryMin: time.Hour, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}).Run(runCtx)
			}()
			var ds []storage.Delivery
			for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
				if ds, err = st.Deliveries(ctx, hook.ID); err == nil && len(ds) == 1 && ds[0].Attempts > 0 {
					break
				}
			}
			stop()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if len(ds) != 1 || ds[0].Attempts != 1 || ds[0].State != storage.DeliveryPending ||
				!strings.Contains(ds[0].LastError, "HTTP 500") || !utf8.ValidString(ds[0].LastError) ||
				time.Until(ds[0].NextAt) < 50*time.Minute {
				t.Errorf("deliveries %+v; want one attempt recorded, its error kept, the next an hour later", ds)
			}
		})
	}
}

// hungClaimStore is a real store whose first claim was sent on a connection to a database host
// that went away (a failover, a partition): no answer comes, and it ends only with its context.
type hungClaimStore struct {
	*storage.Store
	claims atomic.Int64
}

func (s *hungClaimStore) ClaimDue(ctx context.Context, now, lease time.Time, limit int) ([]storage.Delivery, error) {
	if s.claims.Add(1) == 1 {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return s.Store.ClaimDue(ctx, now, lease, limit)
}

// TestHungClaimDoesNotStopDeliveries: a claim that gets no answer holds the deliverer up for a
// bounded time only, then deliveries go on.
func TestHungClaimDoesNotStopDeliveries(t *testing.T) {
	ctx := context.Background()
	st, _, _, got := pingReceiver(t)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- New(&hungClaimStore{Store: st}, Options{}).Run(runCtx) }()
	defer func() { stop(); <-done }()
	select {
	case <-got:
	case <-time.After(storeTimeout + 5*time.Second):
		t.Fatalf("nothing delivered within %v of a claim that got no answer", storeTimeout+5*time.Second)
	}
}
