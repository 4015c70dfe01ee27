package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/sluicemedia/sluice/api"
	"github.com/sluicemedia/sluice/internal/events"
	"github.com/sluicemedia/sluice/internal/redact"
	"github.com/sluicemedia/sluice/internal/webhooks"
	"github.com/sluicemedia/sluice/storage"
)

// emitter is where the app's event sources send their events (the events hub's Emit); a nil
// emitter drops them (tests that run pipelines alone).
type emitter func(events.Event)

func (e emitter) emit(ev events.Event) {
	if e != nil {
		e(ev)
	}
}

// about is the record an event is about.
type about struct {
	module storage.Module
	id     string
	name   string
}

func (a about) event(typ string, fields map[string]any) events.Event {
	return events.Event{Type: typ, Time: time.Now(), Module: string(a.module), RecordID: a.id, Name: a.name, Fields: fields}
}

// apiChanges turns the API's record changes into events.
type apiChanges struct{ emit emitter }

var _ api.Changes = apiChanges{}

// Changed implements api.Changes.
func (c apiChanges) Changed(m storage.Module, id, name, change string) {
	c.emit.emit(about{m, id, name}.event(change, nil))
}

// fileDoc is a recorded file's entry as the API renders it (API.md "Recording files").
func fileDoc(f storage.RecordedFile) map[string]any {
	var ended any
	if f.Ended != nil && !f.Ended.IsZero() {
		ended = api.FormatTime(*f.Ended)
	}
	return map[string]any{"id": f.ID, "name": f.Name, "path": f.Path, "format": f.Format, "size": f.Size,
		"duration": f.Duration, "created": api.FormatTime(f.Created), "ended": ended, "state": f.State}
}

// fileEvent is a recorded file event of recording (id, name).
func fileEvent(typ, id, name string, f storage.RecordedFile) events.Event {
	return about{storage.ModuleRecording, id, name}.event(typ, map[string]any{"file": fileDoc(f)})
}

// webhookBackend serves the webhooks module's status and test.
type webhookBackend struct {
	store *storage.Store
	wake  func()
}

var _ api.Webhooks = (*webhookBackend)(nil)

// DeliveryStatus implements api.Webhooks.
func (b *webhookBackend) DeliveryStatus(ctx context.Context, id string) (storage.DeliveryStatus, error) {
	return b.store.DeliveryStatus(ctx, id)
}

// Ping implements api.Webhooks: a ping event, not kept in the history, queued for w alone.
func (b *webhookBackend) Ping(ctx context.Context, w *storage.Webhook) (string, error) {
	ev := about{storage.ModuleWebhooks, w.ID, w.Name}.event(events.Ping, map[string]any{"url": redact.URL(w.URL, redact.NoUser)})
	id, err := b.store.AddDelivery(ctx, w.ID, events.Ping, ev.JSON(), ev.Time)
	if err != nil {
		return "", fmt.Errorf("webhook %q: %w", w.Name, err)
	}
	b.wake()
	return id, nil
}

// withLog sets o's logger.
func withLog(o webhooks.Options, log *slog.Logger) webhooks.Options {
	o.Log = log
	return o
}

// webhookOptions are the deliverer's settings from the configuration.
func webhookOptions(cfg Config) webhooks.Options {
	return webhooks.Options{RetryMin: cfg.WebhookRetryMin, RetryMax: cfg.WebhookRetryMax, UserAgent: "sluice/" + Version}
}
