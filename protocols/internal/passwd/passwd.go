// Package passwd is the password a listen input or a server module may ask of a publisher or a
// player: where an input's address sets it, and how one given is checked. The RTMP and HTTP
// listeners share it (RTSP's goes through RTSP authentication). Standard library only.
package passwd

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/url"
	"time"
)

// Param is the query parameter that carries a password, in a listen input's address
// (rtmp://0.0.0.0:1935/live/cam?password=S, http://0.0.0.0:8080/in?password=S) and in a
// publisher's.
const Param = "password"

// Why a password is refused, for logs and answers.
const (
	Missing = "password missing"
	Wrong   = "wrong password"
)

// Delay is how long a refusal for a password waits before it is answered: with the listeners'
// per-address connection caps it bounds how fast one address can guess.
const Delay = time.Second

// Wait waits Delay, and tells false when ctx ended first (the client went away).
func Wait(ctx context.Context) bool {
	t := time.NewTimer(Delay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// FromAddress reads the password a listen input's address sets: its query's Param; given is
// false when the address has none. Nothing else of the address is read. Errors never show the
// address, which holds the password.
func FromAddress(raw string) (password string, given bool, err error) {
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
	switch v := q[Param]; len(v) {
	case 0:
		return "", false, nil
	case 1:
		return v[0], true, nil
	default:
		return "", false, fmt.Errorf("%s is given %d times", Param, len(v))
	}
}

// Check tells why a client is refused when want is the password asked: "" when want is empty
// or got (given when the client gave one) is it, else Missing or Wrong. Digests are compared,
// in the same time whatever the lengths.
func Check(want, got string, given bool) string {
	switch {
	case want == "":
		return ""
	case !given:
		return Missing
	}
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	if subtle.ConstantTimeCompare(g[:], w[:]) != 1 {
		return Wrong
	}
	return ""
}
