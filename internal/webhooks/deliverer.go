package webhooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/sluicemedia/sluice/internal/opt"
	"github.com/sluicemedia/sluice/internal/redact"
	"github.com/sluicemedia/sluice/storage"
)

// Store is what the deliverer needs of the record store; *storage.Store satisfies it.
type Store interface {
	Get(ctx context.Context, m storage.Module, id string, into storage.Record) error
	// Now is the store's clock, which the outbox's due times and leases are on.
	Now(ctx context.Context) (time.Time, error)
	ClaimDue(ctx context.Context, now, lease time.Time, limit int) ([]storage.Delivery, error)
	NextDeliveryAt(ctx context.Context) (time.Time, bool, error)
	FinishAttempt(ctx context.Context, d storage.Delivery, state string, at, next time.Time, errText string) (bool, error)
	PruneDeliveries(ctx context.Context, giveUp, before time.Time) (int64, error)
}

// Defaults of Options.
const (
	DefaultRetryMin    = time.Second
	DefaultRetryMax    = 10 * time.Minute
	DefaultGiveUp      = 24 * time.Hour
	DefaultConcurrency = 8
	DefaultTimeout     = 10 * time.Second
	// DefaultKeep is how long delivered and failed deliveries stay in the outbox (their
	// counts in the webhook's delivery status).
	DefaultKeep = 7 * 24 * time.Hour
	// maxResponse is how much of a receiver's answer is read (and discarded); the first
	// bytes of an error answer go into last_error.
	maxResponse = 64 << 10
	// errExcerpt is how much of a failed answer's body last_error quotes.
	errExcerpt = 200
	// storeTimeout bounds each of the deliverer's store calls.
	storeTimeout = 10 * time.Second
)

// Options configure a Deliverer. Zero values take the defaults.
type Options struct {
	// RetryMin is the wait after a delivery's first failed attempt; each failure doubles it.
	// Default 1 s.
	RetryMin time.Duration
	// RetryMax caps the wait between attempts. Default 10 min.
	RetryMax time.Duration
	// GiveUp is how long after it was queued a delivery is retried; then it is failed.
	// Default 24 h.
	GiveUp time.Duration
	// Concurrency is how many attempts run at once. Default 8.
	Concurrency int
	// Timeout bounds one attempt: connect, send, the answer's headers and its first 64 KiB.
	// Default 10 s.
	Timeout time.Duration
	// UserAgent is sent with each delivery.
	UserAgent string
	// Log receives the deliverer's messages. Default slog.Default().
	Log *slog.Logger
}

func (o Options) withDefaults() Options {
	opt.Positive(&o.RetryMin, DefaultRetryMin)
	opt.Positive(&o.RetryMax, DefaultRetryMax)
	if o.RetryMin > o.RetryMax {
		o.RetryMax = o.RetryMin
	}
	opt.Positive(&o.GiveUp, DefaultGiveUp)
	opt.Positive(&o.Concurrency, DefaultConcurrency)
	opt.Positive(&o.Timeout, DefaultTimeout)
	opt.Zero(&o.UserAgent, "sluice-webhooks")
	opt.Zero(&o.Log, slog.Default())
	return o
}

// Deliverer takes due deliveries from the outbox and POSTs them.
type Deliverer struct {
	store  Store
	opts   Options
	log    *slog.Logger
	client *http.Client
	wake   chan struct{}
}

// New returns a Deliverer over store; call Run.
func New(store Store, opts Options) *Deliverer {
	opts = opts.withDefaults()
	return &Deliverer{store: store, opts: opts, log: opts.Log, wake: make(chan struct{}, 1), client: newClient(opts.Timeout)}
}

// newClient is the delivery client: its own transport with timeouts, no proxy from the
// environment, and no redirects (a 3xx answer is a failed attempt: a webhook's URL is the
// one place its events go).
func newClient(timeout time.Duration) *http.Client {
	tr := &http.Transport{
		Proxy:                  nil,
		TLSHandshakeTimeout:    timeout,
		ResponseHeaderTimeout:  timeout,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Wake tells the deliverer that new deliveries may be due. It never blocks.
func (d *Deliverer) Wake() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Run delivers until ctx ends, then waits for the attempts under way.
func (d *Deliverer) Run(ctx context.Context) error {
	sem := make(chan struct{}, d.opts.Concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	prune := time.NewTicker(time.Minute)
	defer prune.Stop()
	d.prune(ctx)
	for {
		// Claims, leases and waits are on the store's clock: with several nodes on one
		// database, a node whose clock runs ahead must not take a delivery another one is
		// attempting for one whose lease has passed.
		now := d.now(ctx)
		free := d.opts.Concurrency - len(sem)
		if free > 0 {
			sctx, cancel := context.WithTimeout(ctx, storeTimeout)
			due, err := d.store.ClaimDue(sctx, now, now.Add(d.opts.Timeout+5*time.Second), free)
			cancel()
			if err != nil && ctx.Err() == nil {
				d.log.Warn("webhook outbox: reading due deliveries", "error", err)
			}
			for _, dl := range due {
				sem <- struct{}{}
				wg.Go(func() {
					defer func() { <-sem; d.Wake() }()
					d.attempt(ctx, dl)
				})
			}
		}
		wait := time.Minute
		if len(sem) < d.opts.Concurrency {
			sctx, cancel := context.WithTimeout(ctx, storeTimeout)
			if at, ok, err := d.store.NextDeliveryAt(sctx); err == nil && ok {
				wait = min(wait, max(at.Sub(now), 0))
			}
			cancel()
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-d.wake:
		case <-t.C:
		case <-prune.C:
			d.prune(ctx)
		}
		t.Stop()
	}
}

// now is the store's clock (Store.Now); this process's when the store cannot tell it, which
// costs at most a delivery tried early or late.
func (d *Deliverer) now(ctx context.Context) time.Time {
	// Each store call of the deliverer is bounded: a statement sent to a database host that
	// went away may otherwise wait for as long as the kernel keeps the connection (many
	// minutes), and no delivery is made meanwhile.
	sctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	t, err := d.store.Now(sctx)
	if err != nil {
		if ctx.Err() == nil {
			d.log.Warn("webhook outbox: reading the store's clock; using this process's", "error", err)
		}
		return time.Now()
	}
	return t
}

func (d *Deliverer) prune(ctx context.Context) {
	now := d.now(ctx)
	pctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	if _, err := d.store.PruneDeliveries(pctx, now.Add(-d.opts.GiveUp), now.Add(-DefaultKeep)); err != nil && ctx.Err() == nil {
		d.log.Warn("webhook outbox: pruning", "error", err)
	}
}

// attempt POSTs one delivery and records the result.
func (d *Deliverer) attempt(ctx context.Context, dl storage.Delivery) {
	var w storage.Webhook
	sctx, cancel := context.WithTimeout(ctx, storeTimeout)
	err := d.store.Get(sctx, storage.ModuleWebhooks, dl.WebhookID, &w)
	cancel()
	if err != nil {
		if !errors.Is(err, storage.ErrNotFound) && ctx.Err() == nil {
			d.log.Warn("webhook outbox: reading the webhook", "webhook", dl.WebhookID, "error", err)
		}
		return
	}
	log := d.log.With("webhook", w.ID, "name", w.Name, "delivery", dl.ID, "event", dl.Type)
	start := d.now(ctx)
	err = d.post(ctx, &w, dl)
	if ctx.Err() != nil {
		// The server is stopping: the delivery stays pending and is retried after the restart.
		return
	}
	state, next, errText := storage.DeliveryDelivered, start, ""
	if err != nil {
		errText = err.Error()
		next = start.Add(d.backoff(dl.Attempts + 1))
		state = storage.DeliveryPending
		if next.After(dl.Created.Add(d.opts.GiveUp)) {
			state = storage.DeliveryFailed
			log.Warn("webhook delivery failed for good", "attempts", dl.Attempts+1, "error", err)
		} else {
			log.Info("webhook delivery failed; retrying", "attempts", dl.Attempts+1, "retry_at", next, "error", err)
		}
	}
	fctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	recorded, err := d.store.FinishAttempt(fctx, dl, state, start, next, errText)
	switch {
	case err != nil:
		log.Warn("webhook outbox: recording an attempt", "error", err)
	case !recorded:
		log.Info("webhook outbox: the attempt outlasted its claim, which another attempt took; that one's outcome is kept",
			"outcome", state)
	}
}

// backoff is the wait after the n-th failed attempt: RetryMin doubling, at most RetryMax.
func (d *Deliverer) backoff(n int) time.Duration {
	b := d.opts.RetryMin
	for i := 1; i < n && b < d.opts.RetryMax; i++ {
		b *= 2
	}
	return min(b, d.opts.RetryMax)
}

// post sends one delivery: a 2xx answer is success.
func (d *Deliverer) post(ctx context.Context, w *storage.Webhook, dl storage.Delivery) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(dl.Body))
	if err != nil {
		return fmt.Errorf("webhook %q: %w", w.Name, redact.Error(err, w.URL, redact.NoUser))
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", d.opts.UserAgent)
	h.Set(EventHeader, dl.Type)
	h.Set(DeliveryHeader, dl.ID)
	h.Set(SignatureHeader, Sign(w.Secret, time.Now().Unix(), dl.Body))
	resp, err := d.client.Do(req)
	if err != nil {
		return fmt.Errorf("POST %s: %w", shown(w.URL), unwrapURL(err, w.URL))
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if resp.StatusCode/100 == 2 {
		return nil
	}
	// Any bytes may come (a page in another encoding, a character cut at the limit): the store
	// makes them text (Store.FinishAttempt).
	excerpt := strings.TrimSpace(string(body[:min(len(body), errExcerpt)]))
	if resp.StatusCode/100 == 3 {
		return fmt.Errorf("POST %s: HTTP %d: redirects are not followed (to %q)", shown(w.URL), resp.StatusCode, shown(resp.Header.Get("Location")))
	}
	if excerpt != "" {
		return fmt.Errorf("POST %s: HTTP %d: %s", shown(w.URL), resp.StatusCode, redact.Text(excerpt, w.URL, redact.NoUser))
	}
	return fmt.Errorf("POST %s: HTTP %d", shown(w.URL), resp.StatusCode)
}
