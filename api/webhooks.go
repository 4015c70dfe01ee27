package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/sluicemedia/sluice/internal/events"
	"github.com/sluicemedia/sluice/storage"
)

// Webhooks is what the webhooks module needs besides the store (internal/app implements it).
type Webhooks interface {
	// DeliveryStatus sums up a webhook's outbox.
	DeliveryStatus(ctx context.Context, id string) (storage.DeliveryStatus, error)
	// Ping queues a ping event for the webhook; it wraps storage.ErrNotFound when it is gone.
	Ping(ctx context.Context, w *storage.Webhook) (deliveryID string, err error)
}

// Changes is told of every record change the API made (the event stream's created, updated,
// started, stopped and removed events); it must not block.
type Changes interface {
	Changed(m storage.Module, id, name, change string)
}

// Webhook secrets: at least 16 and at most 256 characters.
const (
	minSecret = 16
	maxSecret = 256
)

// webhooksModule serves /api/webhooks: event targets (issue 14). A webhook runs no process.
func webhooksModule() *module {
	m := newModule(runsNothing, "webhooks", "webhook", validateWebhook, webhookSchema())
	m.decorate = readHook{add: decorateWebhook, keys: []string{"secret", "secret_set"}}
	m.attach = readHook{add: attachDelivery, keys: []string{"delivery"}}
	return m
}

// webhookModules are the modules a webhook's filter_module may name.
var webhookModules = []string{string(storage.ModuleVOD), string(storage.ModuleRestream), string(storage.ModuleRecording),
	string(storage.ModuleSRTServers), string(storage.ModuleRTMPServers), string(storage.ModuleWebhooks)}

// validateWebhook reads a webhook record.
func validateWebhook(f *fields) *storage.Webhook {
	var w storage.Webhook
	w.Active = f.boolean("active", true)
	w.Name = f.name("name")
	if u, ok := f.text("url", true, 2048); ok {
		pu, err := url.Parse(u)
		switch {
		case err != nil:
			f.fail("url", "is not a URL: %v", err)
		case pu.Scheme != "http" && pu.Scheme != "https":
			f.fail("url", "must be an http or https URL")
		case pu.Host == "" || pu.Hostname() == "":
			f.fail("url", "has no host")
		case pu.Fragment != "":
			f.fail("url", "must not have a #fragment")
		default:
			w.URL = u
		}
	}
	w.EventTypes = []string{}
	if v, ok := f.get("event_types", false); ok {
		list, isList := v.([]any)
		if !isList {
			f.fail("event_types", "must be an array of event types")
		} else if len(list) > len(events.Stored) {
			f.fail("event_types", "has more than %d entries", len(events.Stored))
		}
		for i, e := range list {
			s, isStr := e.(string)
			if !isStr || !events.IsStored(s) {
				f.fail(fmt.Sprintf("event_types.%d", i), "must be one of %s", strings.Join(events.Stored, ", "))
				break
			}
			if !slices.Contains(w.EventTypes, s) {
				w.EventTypes = append(w.EventTypes, s)
			}
		}
	}
	w.FilterModule, _ = f.enum("filter_module", false, webhookModules...)
	if v, _ := f.m["filter_id"].(string); v != "" {
		w.FilterID, _ = f.objectID("filter_id", false)
	} else {
		f.used["filter_id"] = true
	}
	if s, ok := f.str("secret", true); ok {
		switch n := len([]rune(s)); {
		case n < minSecret || n > maxSecret:
			f.fail("secret", "must be %d to %d characters", minSecret, maxSecret)
		case hasControl(s):
			f.fail("secret", "must not contain control characters")
		default:
			w.Secret = s
		}
	}
	f.used["secret_set"], f.used["delivery"] = true, true
	f.done()
	return &w
}

// decorateWebhook never returns the secret, only whether one is set.
func decorateWebhook(_ *server, _ *http.Request, rec storage.Record, doc map[string]any) error {
	delete(doc, "secret")
	doc["secret_set"] = rec.(*storage.Webhook).Secret != ""
	return nil
}

// attachDelivery adds the webhook's delivery status.
func attachDelivery(s *server, r *http.Request, rec storage.Record, doc map[string]any) error {
	if s.cfg.Webhooks == nil {
		return nil
	}
	st, err := s.cfg.Webhooks.DeliveryStatus(r.Context(), rec.Meta().ID)
	if err != nil {
		return err
	}
	var last any
	if !st.LastAttempt.IsZero() {
		last = FormatTime(st.LastAttempt)
	}
	doc["delivery"] = map[string]any{"pending": st.Pending, "delivered": st.Delivered, "failed": st.Failed,
		"last_error": st.LastError, "last_attempt": last}
	return nil
}

// testWebhook queues a ping for one webhook, active or not; it is delivered when the webhook is
// active, like every delivery.
func (s *server) testWebhook(m *module) http.HandlerFunc {
	return s.answerRecord(m, func(r *http.Request, id string, rec storage.Record) (any, error) {
		if s.cfg.Webhooks == nil {
			return nil, fmt.Errorf("webhooks are not available: %w", ErrNotAvailable)
		}
		did, err := s.cfg.Webhooks.Ping(r.Context(), rec.(*storage.Webhook))
		if err != nil {
			return nil, m.notFound(id, err)
		}
		return map[string]any{"success": true, "delivery_id": did}, nil
	})
}

func webhookSchema() map[string]any {
	types := jsArray(jsEnum(events.Stored...))
	types["description"] = "event types to receive; empty or absent: all of them"
	secret := jsString(minSecret, maxSecret)
	secret["description"] = "HMAC-SHA256 key of the X-Sluice-Signature header; write-only (reads show secret_set)"
	return jsObject([]string{"name", "url", "secret"}, map[string]any{
		"name":          jsString(1, 128),
		"url":           map[string]any{"type": "string", "format": "uri", "maxLength": 2048, "description": "http or https"},
		"event_types":   types,
		"filter_module": jsEnum(webhookModules...),
		"filter_id":     jsID(),
		"secret":        secret,
		"active":        jsBool(true),
	})
}
