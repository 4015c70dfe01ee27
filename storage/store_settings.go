package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Setting returns the value stored under key, and false when there is none.
func (s *Store) Setting(ctx context.Context, key string) (string, bool, error) {
	return setting(ctx, s.read(), key)
}

// SetSetting stores value under key, replacing any earlier value.
func (s *Store) SetSetting(ctx context.Context, key, value string) error {
	return s.write(ctx, func(tx dbq) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES (?, ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
		if err != nil {
			return fmt.Errorf("storage: set setting %q: %w", key, err)
		}
		return nil
	})
}

// SettingOrInit returns the value stored under key; when there is none it stores init() first.
// Concurrent callers (in this process or another one on the same file) all get the same value, and
// init runs at most once per missing key. init runs inside the write transaction: keep it short.
func (s *Store) SettingOrInit(ctx context.Context, key string, init func() (string, error)) (string, error) {
	if v, ok, err := s.Setting(ctx, key); err != nil || ok {
		return v, err
	}
	var value string
	err := s.write(ctx, func(tx dbq) error {
		v, ok, err := setting(ctx, tx, key)
		if err != nil {
			return err
		}
		if ok {
			value = v
			return nil
		}
		if value, err = init(); err != nil {
			return fmt.Errorf("storage: init setting %q: %w", key, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES (?, ?)`, key, value); err != nil {
			return fmt.Errorf("storage: set setting %q: %w", key, err)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return value, nil
}

// setting reads one setting through q.
func setting(ctx context.Context, q dbq, key string) (string, bool, error) {
	var v string
	err := q.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("storage: read setting %q: %w", key, err)
	}
	return v, true, nil
}
