package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Event is one event of the history: its id (assigned by the caller, increasing), its type,
// time, the record it is about, and its JSON document as clients receive it.
type Event struct {
	ID       int64
	Type     string
	Time     time.Time
	Module   Module
	RecordID string
	Doc      []byte
	// Encode, when set, makes Doc again for another id: AppendEvents renumbers a batch whose
	// ids another process (a cluster node on the same database) took meanwhile.
	Encode func(id int64) []byte
}

// Delivery states of the webhook outbox.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// LastEventID is the highest event id ever stored (0 for none), pruned ones included: the
// next event takes a higher one.
func (s *Store) LastEventID(ctx context.Context) (int64, error) {
	var n sql.NullInt64
	err := s.read().QueryRowContext(ctx, s.d.lastEventID).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("storage: read the last event id: %w", err)
	}
	return n.Int64, nil
}

// AppendEvents stores events, in one transaction with an outbox delivery (id from NewID,
// pending, due now) for every active webhook that wants each one (Webhook.Wants): deliveries
// are written before anything tries them, so a crash loses none.
func (s *Store) AppendEvents(ctx context.Context, evs []Event) error {
	if len(evs) == 0 {
		return nil
	}
	return s.write(ctx, func(tx dbq) error {
		hooks, err := activeWebhooks(ctx, tx)
		if err != nil {
			return err
		}
		if err := renumber(ctx, tx, s.d.lastEventID, evs); err != nil {
			return err
		}
		var now time.Time
		if len(hooks) > 0 {
			if now, err = storeNow(ctx, tx); err != nil {
				return err
			}
		}
		for _, e := range evs {
			if _, err := tx.ExecContext(ctx, `INSERT INTO events (id, type, time, module, record_id, doc)
				VALUES (?, ?, ?, ?, ?, ?)`, e.ID, e.Type, formatTime(e.Time), string(e.Module), e.RecordID, string(e.Doc)); err != nil {
				return fmt.Errorf("storage: store event %d: %w", e.ID, err)
			}
			for _, w := range hooks {
				if !w.Wants(e.Type, e.Module, e.RecordID) {
					continue
				}
				if err := addDelivery(ctx, tx, w.ID, e.ID, e.Type, e.Doc, e.Time, dueAt(e.Time, now)); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// renumber moves evs (in place) past the highest id stored when another writer took their ids:
// several cluster nodes append to one history, each numbering from what it read last. One
// process alone never sees that. The store's write lock makes the read and the insert one step.
func renumber(ctx context.Context, tx dbq, lastQuery string, evs []Event) error {
	var last sql.NullInt64
	err := tx.QueryRowContext(ctx, lastQuery).Scan(&last)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("storage: read the last event id: %w", err)
	}
	if evs[0].ID > last.Int64 {
		return nil
	}
	delta := last.Int64 + 1 - evs[0].ID
	for i := range evs {
		evs[i].ID += delta
		if evs[i].Encode != nil {
			evs[i].Doc = evs[i].Encode(evs[i].ID)
		}
	}
	return nil
}

// activeWebhooks reads the active webhooks through q.
func activeWebhooks(ctx context.Context, tx dbq) ([]*Webhook, error) {
	rows, err := tx.QueryContext(ctx, `SELECT doc FROM records WHERE module = ? AND active = 1`, string(ModuleWebhooks))
	if err != nil {
		return nil, fmt.Errorf("storage: list webhooks: %w", err)
	}
	defer rows.Close()
	var out []*Webhook
	for rows.Next() {
		var doc []byte
		if err := rows.Scan(&doc); err != nil {
			return nil, fmt.Errorf("storage: list webhooks: %w", err)
		}
		w := &Webhook{}
		if err := json.Unmarshal(doc, w); err != nil {
			return nil, fmt.Errorf("storage: decode webhook: %w", err)
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

// EventsAfter returns at most limit stored events with an id above after, oldest first.
func (s *Store) EventsAfter(ctx context.Context, after int64, limit int) ([]Event, error) {
	rows, err := s.read().QueryContext(ctx, `SELECT id, type, time, module, record_id, doc FROM events
		WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("storage: read events after %d: %w", after, err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		var at string
		var doc string
		if err := rows.Scan(&e.ID, &e.Type, &at, &e.Module, &e.RecordID, &doc); err != nil {
			return nil, fmt.Errorf("storage: read events: %w", err)
		}
		if e.Time, err = parseTime(at); err != nil {
			return nil, err
		}
		e.Doc = []byte(doc)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("storage: read events: %w", err)
	}
	return out, nil
}

// OldestEventID is the id of the oldest event still kept (0 when none is).
func (s *Store) OldestEventID(ctx context.Context) (int64, error) {
	var n sql.NullInt64
	if err := s.read().QueryRowContext(ctx, `SELECT MIN(id) FROM events`).Scan(&n); err != nil {
		return 0, fmt.Errorf("storage: read the oldest event id: %w", err)
	}
	return n.Int64, nil
}

// PruneEvents deletes the events older than before and all but the newest keep; it returns
// how many went.
func (s *Store) PruneEvents(ctx context.Context, keep int, before time.Time) (int64, error) {
	var n int64
	err := s.write(ctx, func(tx dbq) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM events WHERE time < ?
			OR id < COALESCE((SELECT id FROM events ORDER BY id DESC LIMIT 1 OFFSET ?), 0)`,
			formatTime(before), max(keep-1, 0))
		if err != nil {
			return fmt.Errorf("storage: prune events: %w", err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}
