package rtsp

import (
	"errors"
	"net/url"
	"time"

	"github.com/bluenviron/gortsplib/v4"
	"github.com/bluenviron/gortsplib/v4/pkg/base"
	"github.com/sluicemedia/sluice/protocols/internal/passwd"
)

// authDelay is how long a request with wrong credentials waits before its 401 (after which
// gortsplib closes the connection): with the per-address connection cap it bounds how fast
// one address can guess. A request without credentials gets its challenge at once: every
// client that has them asks without them first. The RTMP and HTTP listeners' delay.
const authDelay = passwd.Delay

// ListenCredentials reads the credentials an INPUT_TYPE_RTSP_LISTEN input's address sets: its
// user information, rtsp://user:password@0.0.0.0:8554/cam; both empty when it has none. The
// address's host, port, path and query are not read. Errors never show the address, which
// holds the password.
func ListenCredentials(raw string) (user, password string, err error) {
	if raw == "" {
		return "", "", nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", errors.New("not a valid URL")
	}
	if u.User == nil {
		return "", "", nil
	}
	password, _ = u.User.Password()
	return u.User.Username(), password, nil
}

// authorized tells whether a request carries the server's credentials, when it asks some. A
// request with wrong ones is logged (at most once a second) and waits authDelay; one without
// any is logged (as often) at debug level: it is how a client with credentials starts.
func (h *handler) authorized(c *gortsplib.ServerConn, req *base.Request) bool {
	if h.user == "" || c.VerifyCredentials(req, h.user, h.pass) {
		return true
	}
	_, given := req.Header["Authorization"]
	l := &h.authLog
	if !given {
		l = &h.askLog
	}
	h.mu.Lock()
	n, log := l.Note(time.Now(), 1)
	h.mu.Unlock()
	if !given {
		if log {
			h.log.Debug("rtsp: credentials asked", "remote", c.NetConn().RemoteAddr().String(), "method", string(req.Method), "asked", n)
		}
		return false
	}
	if log {
		what := "rtsp: publish refused"
		if req.Method != base.Announce {
			what = "rtsp: read refused" // DESCRIBE or SETUP of a reader
		}
		h.log.Warn(what, "remote", c.NetConn().RemoteAddr().String(), "method", string(req.Method),
			"reason", "wrong credentials", "refused", n)
	}
	time.Sleep(authDelay)
	return false
}
