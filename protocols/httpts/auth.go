package httpts

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// PasswordParam is the query parameter that carries a listen input's password, in its address
// (http://0.0.0.0:8080/in?password=S) and in a publisher's (http://host:8080/in?password=S).
const PasswordParam = "password"

// authDelay is how long a request without the right password waits before its 401: with the
// per-address connection cap it bounds how fast one address can guess.
const authDelay = time.Second

// challenge is the WWW-Authenticate header of a 401.
const challenge = `Basic realm="sluice"`

// Refusal reasons for a password, logged.
const (
	reasonNoPassword    = "password missing"
	reasonWrongPassword = "wrong password"
)

// ListenPassword reads the password an INPUT_TYPE_HTTP_LISTEN input's address sets: the
// password parameter (PasswordParam) of its query, http://0.0.0.0:8080/in?password=S; given
// is false when the address has none. The address's host, port and path are not read. Errors
// never show the address, which holds the password.
func ListenPassword(raw string) (password string, given bool, err error) {
	if raw == "" {
		return "", false, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", false, errors.New("not a valid URL")
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return "", false, errors.New("its query has a bad %-escape")
	}
	switch v := q[PasswordParam]; len(v) {
	case 0:
		return "", false, nil
	case 1:
		return v[0], true, nil
	default:
		return "", false, fmt.Errorf("%s is given %d times", PasswordParam, len(v))
	}
}

// checkPassword tells why r is refused when want is the server's password: "" when want is
// empty or r gives it, as the password query parameter or as the password of Basic auth (any
// user). A query password that does not match is wrong even when Basic auth has the right one.
func checkPassword(want string, r *http.Request) string {
	if want == "" {
		return ""
	}
	got, ok := "", false
	if v, has := r.URL.Query()[PasswordParam]; has && len(v) > 0 {
		got, ok = v[0], true
	} else if _, p, has := r.BasicAuth(); has {
		got, ok = p, true
	}
	if !ok {
		return reasonNoPassword
	}
	// Comparing digests takes the same time whatever the lengths.
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	if subtle.ConstantTimeCompare(g[:], w[:]) != 1 {
		return reasonWrongPassword
	}
	return ""
}

// refuseAuth answers 401 with a Basic challenge after authDelay (unless ctx ends first, when
// the connection is gone), logged at most once a second (budget.LogLimit) with the refusals
// the line stands for.
func (srv *Server) refuseAuth(ctx context.Context, w http.ResponseWriter, r *http.Request, why string) {
	srv.mu.Lock()
	n, log := srv.authLog.Note(time.Now(), 1)
	srv.mu.Unlock()
	if log {
		srv.log.Warn("http: publish refused", "remote", r.RemoteAddr, "path", r.URL.Path, "reason", why, "refused", n)
	}
	t := time.NewTimer(authDelay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return
	}
	w.Header().Set("WWW-Authenticate", challenge)
	srv.refuse(w, "unauthorized: "+why, http.StatusUnauthorized)
}
