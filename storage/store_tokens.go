package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// RevokeToken records that the token with this jti may no longer be used; exp is the token's
// expiry, after which PruneRevoked may forget it.
func (s *Store) RevokeToken(ctx context.Context, jti string, exp time.Time) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO revoked_tokens (jti, exp) VALUES (?, ?)
			ON CONFLICT (jti) DO UPDATE SET exp = excluded.exp`, jti, formatTime(exp))
		if err != nil {
			return fmt.Errorf("storage: revoke token: %w", err)
		}
		return nil
	})
}

// TokenRevoked tells whether the token with this jti was revoked.
func (s *Store) TokenRevoked(ctx context.Context, jti string) (bool, error) {
	var one int
	err := s.r.QueryRowContext(ctx, `SELECT 1 FROM revoked_tokens WHERE jti = ?`, jti).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("storage: read revoked token: %w", err)
	}
	return true, nil
}

// PruneRevoked forgets revoked tokens that expired before now (they fail validation anyway) and
// returns how many it removed.
func (s *Store) PruneRevoked(ctx context.Context, now time.Time) (int, error) {
	var n int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM revoked_tokens WHERE exp < ?`, formatTime(now))
		if err != nil {
			return fmt.Errorf("storage: prune revoked tokens: %w", err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}
