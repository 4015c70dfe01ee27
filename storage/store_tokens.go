package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"time"
)

// authRevisionKey is the setting that counts the changes to token revocation (RevokeToken,
// RevokeUserTokens): each bumps it in its own transaction, so a process that keeps the
// revocation state in memory learns it is stale by reading this one row.
const authRevisionKey = "auth_revision"

// notBeforePrefix is the settings key prefix of a user's token "not before": the time of the
// last `sluice passwd` or logoutAll; tokens issued until then are refused.
const notBeforePrefix = "tokens_not_before/"

// notBeforeEnd is the first key after every notBeforePrefix key ('0' follows '/').
const notBeforeEnd = "tokens_not_before0"

// Revocations is the token revocation state of the store at one instant.
type Revocations struct {
	// Revision is the store's auth revision when this state was read.
	Revision int64
	// Tokens are the revoked token ids with their expiry.
	Tokens map[string]time.Time
	// NotBefore is each user's token "not before": tokens issued until then are refused.
	NotBefore map[string]time.Time
}

// authSignalSuffix names the file beside the store that every revocation rewrites with the new
// auth revision once it is committed: a process keeping the revocation state in memory learns of
// another process's revocation (`sluice passwd`) from the file's Stamp, one stat, without a
// query. It holds nothing secret.
const authSignalSuffix = "-auth"

// Stamp is the size and modification time of the store's revocation signal file: it changes
// when a revocation is committed, by this process or another. Equal stamps mean that probably
// no revocation was committed in between: a file system with coarse modification times can hide
// one, and a process that stops between its commit and the file's update leaves it unchanged,
// so pair it with a periodic AuthRevision.
type Stamp struct {
	Size  int64
	ModNS int64
}

// RevocationStamp returns the Stamp now (zero while no revocation was ever signalled), and false
// when the file cannot be examined (then assume that something changed).
//
// A PostgreSQL store has no file beside it: its stamp counts the revocations this Store committed
// (Size), so another sluice's revocation is found at the periodic AuthRevision (LISTEN/NOTIFY is
// to come with the nodes of issue 17).
func (s *Store) RevocationStamp() (Stamp, bool) {
	if s.d != sqliteDialect {
		return Stamp{Size: s.revocations.Load()}, true
	}
	fi, err := os.Stat(s.path + authSignalSuffix)
	if errors.Is(err, fs.ErrNotExist) {
		return Stamp{}, true
	}
	if err != nil {
		return Stamp{}, false
	}
	return Stamp{Size: fi.Size(), ModNS: fi.ModTime().UnixNano()}, true
}

// signalRevocation rewrites the signal file with rev after a revocation was committed. It is
// best effort: the revocation is in force; another process that misses the signal finds it at
// its periodic AuthRevision.
func (s *Store) signalRevocation(rev int64) {
	s.revocations.Add(1)
	if s.d != sqliteDialect {
		return
	}
	_ = os.WriteFile(s.path+authSignalSuffix, strconv.AppendInt(nil, rev, 10), fileMode)
}

// revoke runs a revocation write in a transaction; when fn changed something it bumps the auth
// revision in the same transaction and, once that is committed, signals it.
func (s *Store) revoke(ctx context.Context, fn func(tx dbq) (bool, error)) error {
	var rev int64
	err := s.write(ctx, func(tx dbq) error {
		changed, err := fn(tx)
		if err != nil || !changed {
			return err
		}
		rev, err = bumpAuthRevision(ctx, tx)
		return err
	})
	if err == nil && rev > 0 {
		s.signalRevocation(rev)
	}
	return err
}

// bumpAuthRevision adds one to the auth revision inside tx and returns it.
func bumpAuthRevision(ctx context.Context, tx dbq) (int64, error) {
	var rev int64
	err := tx.QueryRowContext(ctx, `INSERT INTO settings (key, value) VALUES (?, '1')
		ON CONFLICT (key) DO UPDATE SET value = CAST(settings.value AS INTEGER) + 1
		RETURNING CAST(value AS INTEGER)`, authRevisionKey).Scan(&rev)
	if err != nil {
		return 0, fmt.Errorf("storage: bump auth revision: %w", err)
	}
	return rev, nil
}

// AuthRevision returns the store's auth revision (0 before the first revocation). It reads
// through a connection of its own, so that it never waits behind the other reads.
func (s *Store) AuthRevision(ctx context.Context) (int64, error) {
	v, ok, err := setting(ctx, dbq{s.a, s.d}, authRevisionKey)
	if err != nil || !ok {
		return 0, err
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("storage: setting %s: %q is not a number", authRevisionKey, v)
	}
	return n, nil
}

// RevokeToken records that the token with this jti may no longer be used; exp is the token's
// expiry, after which PruneRevoked may forget it.
func (s *Store) RevokeToken(ctx context.Context, jti string, exp time.Time) error {
	return s.revoke(ctx, func(tx dbq) (bool, error) {
		_, err := tx.ExecContext(ctx, `INSERT INTO revoked_tokens (jti, exp) VALUES (?, ?)
			ON CONFLICT (jti) DO UPDATE SET exp = excluded.exp`, jti, formatTime(exp))
		if err != nil {
			return false, fmt.Errorf("storage: revoke token: %w", err)
		}
		return true, nil
	})
}

// TokenRevoked tells whether the token with this jti was revoked.
func (s *Store) TokenRevoked(ctx context.Context, jti string) (bool, error) {
	var one int
	err := s.read().QueryRowContext(ctx, `SELECT 1 FROM revoked_tokens WHERE jti = ?`, jti).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("storage: read revoked token: %w", err)
	}
	return true, nil
}

// RevokeUserTokens refuses every token of the user issued until at, and returns the user's
// "not before" as stored: at, or a later one stored before (a clock set back must not revive
// tokens).
func (s *Store) RevokeUserTokens(ctx context.Context, userID string, at time.Time) (time.Time, error) {
	at = at.UTC().Truncate(time.Millisecond)
	err := s.revoke(ctx, func(tx dbq) (bool, error) {
		old, err := notBefore(ctx, tx, userID)
		if err != nil {
			return false, err
		}
		if old.After(at) {
			at = old
			return false, nil
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES (?, ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, notBeforePrefix+userID, at.Format(time.RFC3339Nano)); err != nil {
			return false, fmt.Errorf("storage: revoke tokens of user %s: %w", userID, err)
		}
		return true, nil
	})
	if err != nil {
		return time.Time{}, err
	}
	return at, nil
}

// TokensNotBefore returns the user's token "not before" (zero when none was set).
func (s *Store) TokensNotBefore(ctx context.Context, userID string) (time.Time, error) {
	return notBefore(ctx, s.read(), userID)
}

// notBefore reads a user's token "not before" through q.
func notBefore(ctx context.Context, q dbq, userID string) (time.Time, error) {
	v, ok, err := setting(ctx, q, notBeforePrefix+userID)
	if err != nil || !ok {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("storage: setting %s%s: %q is not a time: %w", notBeforePrefix, userID, v, err)
	}
	return t, nil
}

// Revocations reads the whole revocation state in one snapshot: the auth revision, the revoked
// tokens that expire at or after since (older ones fail validation anyway) and every user's
// "not before".
func (s *Store) Revocations(ctx context.Context, since time.Time) (Revocations, error) {
	sqlTx, err := s.r.BeginTx(ctx, &s.d.snapshot)
	if err != nil {
		return Revocations{}, fmt.Errorf("storage: read revocations: %w", err)
	}
	defer func() { _ = sqlTx.Rollback() }()
	tx := dbq{sqlTx, s.d}
	r := Revocations{Tokens: map[string]time.Time{}, NotBefore: map[string]time.Time{}}
	v, ok, err := setting(ctx, tx, authRevisionKey)
	if err != nil {
		return Revocations{}, err
	}
	if ok {
		if r.Revision, err = strconv.ParseInt(v, 10, 64); err != nil {
			return Revocations{}, fmt.Errorf("storage: setting %s: %q is not a number", authRevisionKey, v)
		}
	}
	if err := scanRows(ctx, tx, `SELECT jti, exp FROM revoked_tokens WHERE exp >= ?`, []any{formatTime(since)},
		func(jti, exp string) error {
			t, err := parseTime(exp)
			r.Tokens[jti] = t
			return err
		}); err != nil {
		return Revocations{}, fmt.Errorf("storage: read revoked tokens: %w", err)
	}
	if err := scanRows(ctx, tx, `SELECT key, value FROM settings WHERE key >= ? AND key < ?`, []any{notBeforePrefix, notBeforeEnd},
		func(key, value string) error {
			t, err := time.Parse(time.RFC3339Nano, value)
			if err != nil {
				return fmt.Errorf("setting %s: %q is not a time: %w", key, value, err)
			}
			r.NotBefore[key[len(notBeforePrefix):]] = t
			return nil
		}); err != nil {
		return Revocations{}, fmt.Errorf("storage: read token not-befores: %w", err)
	}
	return r, nil
}

// scanRows runs a query of two text columns in tx and calls fn for each row.
func scanRows(ctx context.Context, tx dbq, query string, args []any, fn func(a, b string) error) error {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var a, b string
		if err := rows.Scan(&a, &b); err != nil {
			return err
		}
		if err := fn(a, b); err != nil {
			return err
		}
	}
	return rows.Err()
}

// PruneRevoked forgets revoked tokens that expired before now (they fail validation anyway) and
// returns how many it removed.
func (s *Store) PruneRevoked(ctx context.Context, now time.Time) (int, error) {
	var n int64
	err := s.write(ctx, func(tx dbq) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM revoked_tokens WHERE exp < ?`, formatTime(now))
		if err != nil {
			return fmt.Errorf("storage: prune revoked tokens: %w", err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}
