package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/sluicemedia/sluice/storage"
)

// AdminUser is the user created on first start.
const AdminUser = "admin"

type authKey struct{}

// authInfo is what the token middleware learned about the caller.
type authInfo struct {
	userID string
	jti    string
	exp    time.Time
	token  string
}

func authOf(r *http.Request) authInfo {
	a, _ := r.Context().Value(authKey{}).(authInfo)
	return a
}

func userID(r *http.Request) string { return authOf(r).userID }

// requireToken refuses requests without a valid, unrevoked token of an existing user. With
// query, ?token= is accepted too (download links).
func (s *server) requireToken(query bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			a, err := s.authenticate(r, query)
			if err != nil {
				s.fail(w, r, err)
				return
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), authKey{}, a)))
		})
	}
}

func (s *server) authenticate(r *http.Request, query bool) (authInfo, error) {
	raw := strings.TrimSpace(r.Header.Get("x-access-token"))
	if raw == "" {
		if scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
			raw = strings.TrimSpace(tok)
		}
	}
	if raw == "" && query {
		raw = r.URL.Query().Get("token")
	}
	if raw == "" {
		return authInfo{}, errUnauthorized("a token is required: send x-access-token or Authorization: Bearer")
	}
	c, err := parseToken(s.secret, raw, s.now)
	if err != nil {
		s.log.Debug("token refused", "path", r.URL.Path, "err", err)
		return authInfo{}, errUnauthorized("the token is invalid or expired")
	}
	// The revocation state is in memory: no store read for most requests (revocations.go).
	if err := s.revs.check(r.Context(), c); err != nil {
		return authInfo{}, err
	}
	return authInfo{userID: c.UserID, jti: c.JTI, exp: c.ExpiresAt.Time, token: raw}, nil
}

func (s *server) login(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	f := newFields(r.Context(), s.store, body)
	f.alias("email", "username")
	name, _ := f.text("email", true, 256)
	password, _ := f.str("password", true)
	f.done()
	if err := f.err(); err != nil {
		s.fail(w, r, err)
		return
	}
	addr, now := clientAddr(r), s.now()
	// The attempt is counted before the password is checked: concurrent attempts cannot all pass.
	res, wait := s.limiter.reserve([]limitKey{{addrKey(addr), s.maxAddr}, {userKey(name), s.maxUser}}, now)
	if wait > 0 {
		s.fail(w, r, &apiError{Status: http.StatusTooManyRequests, Code: CodeRateLimited,
			Message: "too many failed logins from this address or for this user name; try again later", RetryAfter: wait})
		return
	}
	u, err := s.store.UserByName(r.Context(), name)
	hash := u.PasswordHash
	switch {
	case errors.Is(err, storage.ErrNotFound):
		// The same work as a real check, so that user names cannot be probed.
		hash = s.dummy
	case err != nil:
		res.cancel()
		s.fail(w, r, err)
		return
	}
	ok, err := s.hashes.check(r.Context(), hash, password)
	switch {
	case errors.Is(err, errHashBusy):
		res.cancel()
		if log, n := s.busyLog.allow(now); log {
			s.log.Warn("login refused: every password check slot is busy", "addr", addr, "refused_since_last", n)
		}
		s.fail(w, r, &apiError{Status: http.StatusServiceUnavailable, Code: CodeUnavailable,
			Message: "the server is busy checking other logins; try again shortly", RetryAfter: loginBusyRetry})
		return
	case err != nil:
		res.cancel()
		s.fail(w, r, err)
		return
	case ok && hash != s.dummy:
		tok, err := s.issue(r.Context(), u.ID, now)
		if err != nil {
			res.cancel()
			s.fail(w, r, err)
			return
		}
		res.succeeded(addrKey(addr))
		writeJSON(w, http.StatusOK, map[string]any{"success": true, "token": tok})
		return
	}
	res.failed()
	if s.cfg.Observer != nil {
		s.cfg.Observer.LoginFailed()
	}
	if log, n := s.failLog.allow(now); log {
		s.log.Info("failed login", "addr", addr, "user", name, "failed_since_last", n)
	}
	s.fail(w, r, errUnauthorized("wrong user name or password"))
}

func (s *server) getToken(w http.ResponseWriter, r *http.Request) {
	if _, err := readBody(r); err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"token": authOf(r).token})
}

func (s *server) logout(w http.ResponseWriter, r *http.Request) {
	if _, err := readBody(r); err != nil {
		s.fail(w, r, err)
		return
	}
	a := authOf(r)
	if err := s.store.RevokeToken(r.Context(), a.jti, a.exp); err != nil {
		s.fail(w, r, err)
		return
	}
	s.revs.revoked(a.jti, a.exp)
	writeSuccess(w)
}

// logoutAll revokes every token of the caller issued until now, its own included.
func (s *server) logoutAll(w http.ResponseWriter, r *http.Request) {
	if _, err := readBody(r); err != nil {
		s.fail(w, r, err)
		return
	}
	at, err := revokeTokens(r.Context(), s.store, userID(r), s.now())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.revs.revokedUntil(userID(r), at)
	writeSuccess(w)
}

// Bootstrap prepares authentication on first start: it creates the token secret and the user
// "admin" with adminPassword, or with a generated 20-character password that it returns so the
// caller can print it once. When admin exists it changes nothing and returns "".
func Bootstrap(ctx context.Context, store Store, adminPassword string) (generated string, err error) {
	if _, err := loadSecret(ctx, store); err != nil {
		return "", err
	}
	if _, err := store.UserByName(ctx, AdminUser); err == nil {
		return "", nil
	} else if !errors.Is(err, storage.ErrNotFound) {
		return "", fmt.Errorf("bootstrap: %w", err)
	}
	password := adminPassword
	if password == "" {
		if password, err = randomPassword(20); err != nil {
			return "", err
		}
		generated = password
	}
	hash, err := HashPassword(password)
	if err != nil {
		return "", fmt.Errorf("bootstrap: admin %w", err)
	}
	u := storage.User{ID: storage.NewID(), Name: AdminUser, PasswordHash: hash, Created: time.Now().UTC()}
	if err := store.CreateUser(ctx, u); err != nil {
		if errors.Is(err, storage.ErrNameTaken) {
			return "", nil // another process created it first
		}
		return "", fmt.Errorf("bootstrap: create admin: %w", err)
	}
	return generated, nil
}

// SetPassword sets the password of username, for `sluice passwd`, and revokes every token of
// that user issued before (a running server refuses them at their next request).
func SetPassword(ctx context.Context, store Store, username, password string) error {
	hash, err := HashPassword(password)
	if err != nil {
		return err
	}
	u, err := store.UserByName(ctx, username)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return fmt.Errorf("set password: no user %q", username)
		}
		return fmt.Errorf("set password: %w", err)
	}
	// Tokens first: a failure then leaves the old password with no token, never the new
	// password with the old tokens.
	if _, err := revokeTokens(ctx, store, u.ID, time.Now()); err != nil {
		return fmt.Errorf("set password: %w", err)
	}
	if err := store.SetPasswordHash(ctx, u.ID, hash); err != nil {
		return fmt.Errorf("set password: %w", err)
	}
	return nil
}
