package storage

import "slices"

// Webhook is a target that receives events as signed JSON POSTs (issue 14).
type Webhook struct {
	Base
	Name string `json:"name"`
	// URL is the http or https address deliveries are POSTed to.
	URL string `json:"url"`
	// EventTypes are the event types it receives; empty: every type a webhook may receive.
	EventTypes []string `json:"event_types"`
	// FilterModule and FilterID, when set, keep only the events of that module or record.
	FilterModule string `json:"filter_module,omitempty"`
	FilterID     string `json:"filter_id,omitempty"`
	// Secret keys the HMAC-SHA256 signature of each delivery; the API never returns it.
	Secret string `json:"secret"`
}

// Module implements Record.
func (*Webhook) Module() Module { return ModuleWebhooks }

// UniqueName implements Record.
func (w *Webhook) UniqueName() string { return w.Name }

// PortKeys implements Record: a webhook holds no port.
func (*Webhook) PortKeys() []PortKey { return nil }

// Wants tells whether the webhook receives an event of type typ about record id of module m.
func (w *Webhook) Wants(typ string, m Module, id string) bool {
	if len(w.EventTypes) > 0 && !slices.Contains(w.EventTypes, typ) {
		return false
	}
	if w.FilterModule != "" && Module(w.FilterModule) != m {
		return false
	}
	return w.FilterID == "" || w.FilterID == id
}
