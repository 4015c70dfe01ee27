package api

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicemedia/sluice/storage"
)

// DefaultRevocationRecheck is the longest the in-memory revocation state is trusted without
// reading the store's auth revision (Config.RevocationRecheck): the bound on how late a
// revocation written by another process (`sluice passwd`) takes effect when the store's
// revocation stamp missed it (a file system with coarse modification times, a process stopped
// between its commit and the signal).
const DefaultRevocationRecheck = time.Second

// tokenLeeway is the clock skew parseToken tolerates on exp and iat.
const tokenLeeway = 30 * time.Second

// revocations keeps the store's token revocation state in memory, so that authenticating a
// request reads no store: revoked token ids, each user's "not before", and the users known to
// exist. Changes this process makes are applied at once (revoked, notBefore). Changes by another
// process reach it through the store: a request first compares the store's revocation stamp
// (one stat of a file that only revocations rewrite, no query) with the one of the last check;
// when it moved, or recheck has passed, one request reads the auth revision (a single row, on a
// connection of its own), and only when that changed the whole state, in one snapshot.
// Requests that find the state stale together share one refresh (begun, done), so a burst of
// revocations costs a few revision reads, not one a request in a queue.
type revocations struct {
	store   Store
	now     func() time.Time
	recheck time.Duration

	// refresh serializes the reads of the store; it is never held by a reader of the state.
	refresh sync.Mutex
	// begun numbers the refreshes (written with refresh held); done is the number of the last
	// one that succeeded. A request that found the state stale is satisfied by any refresh that
	// began after it looked: the requests that queue behind one refresh share the next.
	begun, done atomic.Int64

	mu        sync.RWMutex
	loaded    bool
	revision  int64
	stamp     storage.Stamp
	stampOK   bool
	checked   time.Time
	tokens    map[string]time.Time
	notBefore map[string]time.Time
	users     map[string]struct{}
}

func newRevocations(store Store, now func() time.Time, recheck time.Duration) *revocations {
	if recheck <= 0 {
		recheck = DefaultRevocationRecheck
	}
	return &revocations{store: store, now: now, recheck: recheck, tokens: map[string]time.Time{},
		notBefore: map[string]time.Time{}, users: map[string]struct{}{}}
}

// check refuses claims that were revoked or whose user does not exist.
func (v *revocations) check(ctx context.Context, c *tokenClaims) error {
	if err := v.current(ctx); err != nil {
		return fmt.Errorf("check token revocation: %w", err)
	}
	v.mu.RLock()
	_, revoked := v.tokens[c.JTI]
	nbf := v.notBefore[c.UserID]
	_, known := v.users[c.UserID]
	v.mu.RUnlock()
	if revoked {
		return errUnauthorized("the token has been revoked")
	}
	if !known {
		// Only a token signed with the server's secret gets here: a new user, or one that was
		// removed from the store by hand. Users are never deleted by sluice, so a user once
		// found stays known.
		if _, err := v.store.UserByID(ctx, c.UserID); err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				return errUnauthorized("the token's user no longer exists")
			}
			return fmt.Errorf("look up token user: %w", err)
		}
		v.mu.Lock()
		v.users[c.UserID] = struct{}{}
		v.mu.Unlock()
	}
	if !nbf.IsZero() && !c.IssuedAt.After(nbf) {
		return errUnauthorized("the token was revoked by a password change or logoutAll; log in again")
	}
	return nil
}

// current brings the state up to date with the store. When the store's revocation stamp moved
// (a revocation was committed, maybe by another process) the request waits for at most two
// refreshes: the one under way and the next, which begins after its stamp was taken. When only
// recheck has passed, one request refreshes and the others go on meanwhile.
func (v *revocations) current(ctx context.Context) error {
	stamp, ok := v.store.RevocationStamp()
	now := v.now()
	v.mu.RLock()
	same := v.loaded && ok && v.stampOK && stamp == v.stamp
	due := now.Before(v.checked) || now.Sub(v.checked) >= v.recheck
	v.mu.RUnlock()
	switch {
	case same && !due:
		return nil
	case same:
		if !v.refresh.TryLock() {
			return nil // the refresh under way is the periodic one
		}
	default:
		ticket := v.begun.Load()
		v.refresh.Lock()
		if v.done.Load() > ticket {
			v.refresh.Unlock()
			return nil // a refresh that began after this request looked has succeeded meanwhile
		}
	}
	defer v.refresh.Unlock()
	n := v.begun.Add(1)
	// The stamp is taken before the reads: a commit after it moves it again.
	stamp, ok = v.store.RevocationStamp()
	now = v.now()
	rev, err := v.store.AuthRevision(ctx)
	if err != nil {
		return err
	}
	v.mu.RLock()
	same = v.loaded && rev == v.revision
	v.mu.RUnlock()
	var st storage.Revocations
	if !same {
		if st, err = v.store.Revocations(ctx, now.Add(-tokenLeeway)); err != nil {
			return err
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if !same {
		v.merge(st, now)
	}
	v.stamp, v.stampOK, v.checked = stamp, ok, now
	v.done.Store(n)
	return nil
}

// merge adds what the store holds to the state. Revocations only grow (a revoked token stays
// revoked, a "not before" only moves later), so a union keeps what this process applied while
// the store was being read. Tokens past their expiry are forgotten. Called with mu held.
func (v *revocations) merge(st storage.Revocations, now time.Time) {
	cut := now.Add(-tokenLeeway)
	for jti, exp := range v.tokens {
		if exp.Before(cut) {
			delete(v.tokens, jti)
		}
	}
	for jti, exp := range st.Tokens {
		v.tokens[jti] = exp
	}
	for user, t := range st.NotBefore {
		if t.After(v.notBefore[user]) {
			v.notBefore[user] = t
		}
	}
	v.revision, v.loaded = st.Revision, true
}

// revoked records a token this process revoked.
func (v *revocations) revoked(jti string, exp time.Time) {
	v.mu.Lock()
	v.tokens[jti] = exp
	v.mu.Unlock()
}

// revokedUntil records a user's "not before" this process stored.
func (v *revocations) revokedUntil(userID string, at time.Time) {
	v.mu.Lock()
	if at.After(v.notBefore[userID]) {
		v.notBefore[userID] = at
	}
	v.mu.Unlock()
}
