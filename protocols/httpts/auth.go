package httpts

import (
	"context"
	"net/http"
	"time"

	"github.com/sluicemedia/sluice/protocols/internal/passwd"
)

// PasswordParam is the query parameter that carries a listen input's password, in its address
// (http://0.0.0.0:8080/in?password=S) and in a publisher's (http://host:8080/in?password=S).
const PasswordParam = passwd.Param

// challenge is the WWW-Authenticate header of a 401.
const challenge = `Basic realm="sluice"`

// ListenPassword reads the password an INPUT_TYPE_HTTP_LISTEN input's address sets: the
// password parameter (PasswordParam) of its query, http://0.0.0.0:8080/in?password=S; given
// is false when the address has none. The address's host, port and path are not read. Errors
// never show the address, which holds the password.
func ListenPassword(raw string) (password string, given bool, err error) {
	return passwd.FromAddress(raw)
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
	return passwd.Check(want, got, ok)
}

// refuseAuth answers 401 with a Basic challenge after passwd.Delay (unless ctx ends first, when
// the connection is gone), logged at most once a second (budget.LogLimit) with the refusals
// the line stands for.
func (srv *Server) refuseAuth(ctx context.Context, w http.ResponseWriter, r *http.Request, why string) {
	srv.mu.Lock()
	n, log := srv.authLog.Note(time.Now(), 1)
	srv.mu.Unlock()
	if log {
		srv.log.Warn("http: publish refused", "remote", r.RemoteAddr, "path", r.URL.Path, "reason", why, "refused", n)
	}
	if !passwd.Wait(ctx) {
		return
	}
	w.Header().Set("WWW-Authenticate", challenge)
	srv.refuse(w, "unauthorized: "+why, http.StatusUnauthorized)
}
