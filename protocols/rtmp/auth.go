package rtmp

import (
	"context"
	"net/url"
	"strings"

	"github.com/sluicemedia/sluice/protocols/internal/passwd"
)

// PasswordParam is the query parameter that carries a Server's publish or play password:
// rtmp://host:port/live/cam1?password=SECRET, or the key cam1?password=SECRET in OBS.
const PasswordParam = passwd.Param

// Refusal reasons for a password, sent in the status description and logged.
const (
	reasonNoPassword    = passwd.Missing
	reasonWrongPassword = passwd.Wrong
)

// passwordOf returns the password parameter of the query of a stream name or app name
// ("cam1?password=x" gives "x"), percent-decoded when it is escaped.
func passwordOf(s string) (string, bool) {
	_, q, ok := strings.Cut(s, "?")
	if !ok {
		return "", false
	}
	for kv := range strings.SplitSeq(q, "&") {
		k, v, _ := strings.Cut(kv, "=")
		if k != PasswordParam {
			continue
		}
		if d, err := url.PathUnescape(v); err == nil {
			v = d
		}
		return v, true
	}
	return "", false
}

// checkPassword tells why a publish or play of name is refused when want is the server's
// password: "" when want is empty or the password matches. The name's password counts; when
// the name has none, the one in connect's app does.
func (sc *serverConn) checkPassword(want, name string) string {
	if want == "" {
		return ""
	}
	got, ok := passwordOf(name)
	if !ok {
		got, ok = passwordOf(sc.app)
	}
	return passwd.Check(want, got, ok)
}

// refuseAuth refuses a publish or play for its password: logged at most once a second (a
// guesser makes one refusal per connection), answered with code after passwd.Delay.
func (sc *serverConn) refuseAuth(ctx context.Context, what string, streamID uint32, code, key, why string) {
	if n, log := sc.srv.noteRefusal(&sc.srv.authLog); log {
		sc.log.Warn("rtmp: "+what+" refused", "key", key, "reason", why, "refused", n)
	}
	if passwd.Wait(ctx) {
		sc.refuseStatus(streamID, code, why)
	}
}
