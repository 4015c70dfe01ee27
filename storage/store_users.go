package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// CreateUser stores a new user. u.ID must be set (use NewID); a zero Created becomes the current
// time. User names are unique regardless of case; a duplicate wraps ErrNameTaken.
func (s *Store) CreateUser(ctx context.Context, u User) error {
	if err := newRow("user", u.ID, &u.Created); err != nil {
		return err
	}
	return s.write(ctx, func(tx dbq) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO users (id, name, password_hash, created) VALUES (?, ?, ?, ?)`,
			u.ID, u.Name, u.PasswordHash, formatTime(u.Created))
		switch {
		case err == nil:
			return nil
		case isUniqueViolation(err):
			return fmt.Errorf("user %q: %w", u.Name, ErrNameTaken)
		case isPrimaryKeyViolation(err):
			return fmt.Errorf("storage: user id %q is already used", u.ID)
		default:
			return fmt.Errorf("storage: create user %q: %w", u.Name, err)
		}
	})
}

// UserByName returns the user of that name (compared without regard to case); it wraps ErrNotFound.
func (s *Store) UserByName(ctx context.Context, name string) (User, error) {
	return s.user(ctx, s.d.userNameIs, name)
}

// UserByID returns the user with that id; it wraps ErrNotFound.
func (s *Store) UserByID(ctx context.Context, id string) (User, error) {
	return s.user(ctx, `id = ?`, id)
}

// SetPasswordHash replaces a user's password hash; it wraps ErrNotFound.
func (s *Store) SetPasswordHash(ctx context.Context, userID, hash string) error {
	return s.write(ctx, func(tx dbq) error {
		res, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = ? WHERE id = ?`, hash, userID)
		if err != nil {
			return fmt.Errorf("storage: set password of user %q: %w", userID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("storage: set password of user %q: %w", userID, err)
		} else if n == 0 {
			return fmt.Errorf("user %q: %w", userID, ErrNotFound)
		}
		return nil
	})
}

// user reads the one user matching where (a condition on one parameter).
func (s *Store) user(ctx context.Context, where, arg string) (User, error) {
	var u User
	var created string
	err := s.read().QueryRowContext(ctx, `SELECT id, name, password_hash, created FROM users WHERE `+where, arg).
		Scan(&u.ID, &u.Name, &u.PasswordHash, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, fmt.Errorf("user %q: %w", arg, ErrNotFound)
	}
	if err != nil {
		return User{}, fmt.Errorf("storage: read user %q: %w", arg, err)
	}
	if u.Created, err = parseTime(created); err != nil {
		return User{}, err
	}
	return u, nil
}

// newRow checks that a new row (what it is, for the error) has an id, and gives a zero
// creation time the current time.
func newRow(what, id string, created *time.Time) error {
	if id == "" {
		return fmt.Errorf("storage: %s without id", what)
	}
	if created.IsZero() {
		*created = now()
	}
	return nil
}
