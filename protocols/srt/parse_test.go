package srt

import (
	"errors"
	"testing"
)

// checkParsed checks one result of a parser's table test; call names the call in messages. The
// parse fails or succeeds as ok says, a failure wraps sentinel and a success returns want. It
// reports whether the parse failed as wanted, for the caller to check the error further.
func checkParsed[T comparable](t *testing.T, call string, got, want T, err error, ok bool, sentinel error) bool {
	t.Helper()
	switch {
	case ok != (err == nil):
		t.Errorf("%s: error %v, want ok=%v", call, err, ok)
	case err != nil:
		if !errors.Is(err, sentinel) {
			t.Errorf("%s: error %v does not wrap %v", call, err, sentinel)
		}
		return true
	case got != want:
		t.Errorf("%s = %+v, want %+v", call, got, want)
	}
	return false
}
