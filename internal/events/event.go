// Package events is sluice's one event path (issue 14): what happens to records and the
// server becomes an Event, numbered, kept in a bounded history in the store, fanned out to
// the subscribers of the Server-Sent Events stream (GET /api/events) and queued for the
// webhooks that want it, in the same store transaction.
package events

import (
	"encoding/json"
	"time"
)

// Event types. State changes of a process carry state, last_error and restarts; publisher
// events stream_id and remote_address; file events the file entry; server_stats the server
// statistic.
const (
	Created               = "created"
	Updated               = "updated"
	Started               = "started"
	Stopped               = "stopped"
	Removed               = "removed"
	State                 = "state"
	InputUp               = "input_up"
	InputDown             = "input_down"
	PublisherConnected    = "publisher_connected"
	PublisherDisconnected = "publisher_disconnected"
	FileOpened            = "file_opened"
	FileClosed            = "file_closed"
	FileRepaired          = "file_repaired"
	FileRemoved           = "file_removed"
	PlayerReady           = "player_ready"
	ServerStats           = "server_stats"
	Ping                  = "ping"
)

// Stored are the types kept in the history and delivered to webhooks, in documentation order.
var Stored = []string{Created, Updated, Started, Stopped, Removed, State, InputUp, InputDown,
	PublisherConnected, PublisherDisconnected, FileOpened, FileClosed, FileRepaired, FileRemoved, PlayerReady}

// IsStored tells whether typ is one of Stored.
func IsStored(typ string) bool {
	for _, t := range Stored {
		if t == typ {
			return true
		}
	}
	return false
}

// timeFormat is the API's date layout (api.TimeFormat): ISO 8601 UTC with milliseconds.
const timeFormat = "2006-01-02T15:04:05.000Z"

// Event is one thing that happened. Module, RecordID and Name say what it is about (a record;
// the server's own events use ServerModule).
type Event struct {
	// ID is the event's number, assigned when it is stored; 0 for the events that are not
	// (server_stats, ping).
	ID       int64
	Type     string
	Time     time.Time
	Module   string
	RecordID string
	Name     string
	// Fields are the type's own fields, added to the JSON document.
	Fields map[string]any
}

// ServerModule, ServerID and ServerName name the server itself in its events (server_stats).
const (
	ServerModule = "MODULE_API"
	ServerID     = "api"
	ServerName   = "sluice"
)

// JSON is the event's document as clients read it: event_id (when stored), type, time,
// module, id (the record's), name, then the type's fields.
func (e Event) JSON() []byte {
	doc := make(map[string]any, len(e.Fields)+6)
	for k, v := range e.Fields {
		doc[k] = v
	}
	if e.ID > 0 {
		doc["event_id"] = e.ID
	}
	doc["type"], doc["time"] = e.Type, e.Time.UTC().Format(timeFormat)
	doc["module"], doc["id"], doc["name"] = e.Module, e.RecordID, e.Name
	b, err := json.Marshal(doc)
	if err != nil {
		// Fields hold only values the server made (strings, numbers, maps of them).
		b, _ = json.Marshal(map[string]any{"event_id": e.ID, "type": e.Type, "time": e.Time.UTC().Format(timeFormat),
			"module": e.Module, "id": e.RecordID, "name": e.Name, "error": "fields not encodable: " + err.Error()})
	}
	return b
}
