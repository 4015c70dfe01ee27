package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Delivery is one event to POST to one webhook; retries keep its ID (the idempotency id).
type Delivery struct {
	ID          string
	WebhookID   string
	EventID     int64 // 0 for a ping
	Type        string
	Body        []byte
	State       string
	Attempts    int
	Created     time.Time
	NextAt      time.Time
	LastAttempt time.Time // zero before the first attempt
	LastError   string
}

// DeliveryStatus sums up a webhook's outbox.
type DeliveryStatus struct {
	Pending, Delivered, Failed int
	// LastError is the error of the latest failed attempt; empty when the latest attempt
	// succeeded or none was made.
	LastError string
	// LastAttempt is when the latest attempt was made; zero when none was.
	LastAttempt time.Time
}

// Now is the store's clock: on PostgreSQL the database server's, one clock for every node
// that shares it; on SQLite this process's. The webhook outbox's due times and leases are on
// it (ClaimDue, NextDeliveryAt, FinishAttempt), so that nodes whose clocks disagree never
// claim a delivery another node is attempting.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	return storeNow(ctx, s.read())
}

// storeNow reads the store's clock through q (Store.Now).
func storeNow(ctx context.Context, q dbq) (time.Time, error) {
	if q.d.clock == "" {
		return time.Now(), nil
	}
	var t time.Time
	if err := q.QueryRowContext(ctx, q.d.clock).Scan(&t); err != nil {
		return time.Time{}, fmt.Errorf("storage: read the database's clock: %w", err)
	}
	return t, nil
}

// addDelivery writes one pending delivery of an event made at created through tx; due is
// when it is due on the store's clock.
func addDelivery(ctx context.Context, tx dbq, webhookID string, eventID int64, typ string, body []byte, created, due time.Time) error {
	return insertDelivery(ctx, tx, NewID(), webhookID, eventID, typ, body, created, due)
}

// insertDelivery writes one pending delivery with id through tx.
func insertDelivery(ctx context.Context, tx dbq, id, webhookID string, eventID int64, typ string, body []byte, created, due time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO webhook_deliveries (id, webhook_id, event_id, type, body, state, created, next_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, id, webhookID, eventID, typ, string(body), DeliveryPending,
		formatTime(created), formatTime(due))
	if err != nil {
		return fmt.Errorf("storage: queue event %d for webhook %s: %w", eventID, webhookID, err)
	}
	return nil
}

// dueAt is when a delivery of something made at created is due: at once on the store's clock
// (now) even when the maker's clock runs ahead of it.
func dueAt(created, now time.Time) time.Time {
	if now.Before(created) {
		return now
	}
	return created
}

// AddDelivery queues one delivery to webhook webhookID (a ping) and returns its id; it wraps
// ErrNotFound when the webhook is gone.
func (s *Store) AddDelivery(ctx context.Context, webhookID, typ string, body []byte, at time.Time) (string, error) {
	id := NewID()
	return id, s.write(ctx, func(tx dbq) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM records WHERE module = ? AND id = ?`,
			string(ModuleWebhooks), webhookID).Scan(&n); err != nil {
			return fmt.Errorf("storage: read webhook %s: %w", webhookID, err)
		}
		if n == 0 {
			return notFound(ModuleWebhooks, webhookID)
		}
		now, err := storeNow(ctx, tx)
		if err != nil {
			return err
		}
		return insertDelivery(ctx, tx, id, webhookID, 0, typ, body, at.UTC(), dueAt(at.UTC(), now))
	})
}

const deliveryColumns = `id, webhook_id, event_id, type, body, state, attempts, created, next_at, last_attempt, last_error`

// ClaimDue returns at most limit pending deliveries of active webhooks due at or before now,
// the earliest first, and moves them to lease: an attempt under way is not claimed twice, and
// one cut short by a crash is tried again once its lease has passed. Each comes back with
// NextAt at lease: that is the claim FinishAttempt checks.
func (s *Store) ClaimDue(ctx context.Context, now, lease time.Time, limit int) ([]Delivery, error) {
	var out []Delivery
	err := s.write(ctx, func(tx dbq) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries d
			WHERE state = ? AND next_at <= ?
			AND EXISTS (SELECT 1 FROM records r WHERE r.id = d.webhook_id AND r.active = 1)
			ORDER BY next_at, id LIMIT ?`, DeliveryPending, formatTime(now), limit)
		if err != nil {
			return fmt.Errorf("storage: read due deliveries: %w", err)
		}
		for rows.Next() {
			d, err := scanDelivery(rows)
			if err != nil {
				rows.Close()
				return err
			}
			out = append(out, d)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("storage: read due deliveries: %w", err)
		}
		for i, d := range out {
			if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET next_at = ? WHERE id = ?`,
				formatTime(lease), d.ID); err != nil {
				return fmt.Errorf("storage: claim delivery %s: %w", d.ID, err)
			}
			out[i].NextAt = lease
		}
		return nil
	})
	return out, err
}

// NextDeliveryAt is when the earliest pending delivery of an active webhook is due; false
// when none is pending.
func (s *Store) NextDeliveryAt(ctx context.Context) (time.Time, bool, error) {
	var at sql.NullString
	err := s.read().QueryRowContext(ctx, `SELECT MIN(next_at) FROM webhook_deliveries d WHERE state = ?
		AND EXISTS (SELECT 1 FROM records r WHERE r.id = d.webhook_id AND r.active = 1)`, DeliveryPending).Scan(&at)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("storage: read the next delivery: %w", err)
	}
	if !at.Valid {
		return time.Time{}, false, nil
	}
	t, err := parseTime(at.String)
	return t, err == nil, err
}

// Deliveries returns a webhook's deliveries, oldest first (for tests and diagnosis).
func (s *Store) Deliveries(ctx context.Context, webhookID string) ([]Delivery, error) {
	rows, err := s.read().QueryContext(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries
		WHERE webhook_id = ? ORDER BY created, id`, webhookID)
	if err != nil {
		return nil, fmt.Errorf("storage: read deliveries of %s: %w", webhookID, err)
	}
	defer rows.Close()
	var out []Delivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

func scanDelivery(row rowScanner) (Delivery, error) {
	var d Delivery
	var body, created, next, last string
	if err := row.Scan(&d.ID, &d.WebhookID, &d.EventID, &d.Type, &body, &d.State, &d.Attempts,
		&created, &next, &last, &d.LastError); err != nil {
		return Delivery{}, fmt.Errorf("storage: read delivery: %w", err)
	}
	d.Body = []byte(body)
	var err error
	if d.Created, err = parseTime(created); err != nil {
		return Delivery{}, err
	}
	if d.NextAt, err = parseTime(next); err != nil {
		return Delivery{}, err
	}
	if last != "" {
		if d.LastAttempt, err = parseTime(last); err != nil {
			return Delivery{}, err
		}
	}
	return d, nil
}

// FinishAttempt records an attempt of the delivery d, as ClaimDue returned it, made at at: its
// new state (delivered, failed, or pending again until next), and its error (empty on
// success). It records nothing, and reports false, when d's claim is no longer the
// delivery's: its lease ran out and another claim took it (an attempt or its write that
// outlasted the lease), whose outcome is the one to keep; or the delivery is gone (its webhook
// removed).
func (s *Store) FinishAttempt(ctx context.Context, d Delivery, state string, at, next time.Time, errText string) (bool, error) {
	// An error may quote any bytes (a receiver's answer); PostgreSQL's text takes neither
	// invalid UTF-8 nor NUL, and the attempt must be recorded whatever it quotes.
	errText = strings.ReplaceAll(strings.ToValidUTF8(errText, "\uFFFD"), "\x00", "")
	var n int64
	err := s.write(ctx, func(tx dbq) error {
		res, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET state = ?, attempts = attempts + 1,
			last_attempt = ?, next_at = ?, last_error = ? WHERE id = ? AND state = ? AND next_at = ?`,
			state, formatTime(at), formatTime(next), errText, d.ID, DeliveryPending, formatTime(d.NextAt))
		if err != nil {
			return fmt.Errorf("storage: record attempt of delivery %s: %w", d.ID, err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return n == 1, err
}

// DeliveryStatus sums up the outbox of a webhook.
func (s *Store) DeliveryStatus(ctx context.Context, webhookID string) (DeliveryStatus, error) {
	var st DeliveryStatus
	rows, err := s.read().QueryContext(ctx, `SELECT state, COUNT(*) FROM webhook_deliveries WHERE webhook_id = ? GROUP BY state`, webhookID)
	if err != nil {
		return st, fmt.Errorf("storage: read delivery status of %s: %w", webhookID, err)
	}
	for rows.Next() {
		var state string
		var n int
		if err := rows.Scan(&state, &n); err != nil {
			rows.Close()
			return st, fmt.Errorf("storage: read delivery status of %s: %w", webhookID, err)
		}
		switch state {
		case DeliveryPending:
			st.Pending = n
		case DeliveryDelivered:
			st.Delivered = n
		case DeliveryFailed:
			st.Failed = n
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("storage: read delivery status of %s: %w", webhookID, err)
	}
	var last string
	err = s.read().QueryRowContext(ctx, `SELECT last_attempt, last_error FROM webhook_deliveries
		WHERE webhook_id = ? AND last_attempt != '' ORDER BY last_attempt DESC LIMIT 1`, webhookID).Scan(&last, &st.LastError)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return st, nil
	case err != nil:
		return st, fmt.Errorf("storage: read delivery status of %s: %w", webhookID, err)
	}
	st.LastAttempt, err = parseTime(last)
	return st, err
}

// PruneDeliveries marks failed the deliveries still pending that were queued before giveUp
// (an inactive webhook's), and deletes delivered and failed ones whose last attempt is older
// than before; it returns how many went.
func (s *Store) PruneDeliveries(ctx context.Context, giveUp, before time.Time) (int64, error) {
	var n int64
	err := s.write(ctx, func(tx dbq) error {
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET state = ?,
			last_error = 'not delivered before the retry limit',
			last_attempt = CASE WHEN last_attempt = '' THEN ? ELSE last_attempt END
			WHERE state = ? AND created < ?`, DeliveryFailed, formatTime(now()), DeliveryPending, formatTime(giveUp)); err != nil {
			return fmt.Errorf("storage: expire deliveries: %w", err)
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE state != ? AND last_attempt < ?`,
			DeliveryPending, formatTime(before))
		if err != nil {
			return fmt.Errorf("storage: prune deliveries: %w", err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}
