package crypt

import (
	"errors"
	"testing"

	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

func TestParseKMState(t *testing.T) {
	for _, tc := range []struct {
		b     []byte
		state uint32
		ok    bool
	}{
		{[]byte{4, 0, 0, 0}, KMStateBadSecret, true}, // libsrt on a little-endian host
		{[]byte{3, 0, 0, 0}, KMStateNoSecret, true},
		{[]byte{0, 0, 0, 4}, KMStateBadSecret, true}, // a big-endian host
		{[]byte{0, 0, 0, 0}, KMStateUnsecured, true},
		{[]byte{9, 0, 0, 0}, 9, true}, // unknown, read little-endian
		{nil, 0, false},
		{[]byte{4, 0, 0}, 0, false},
		{[]byte{4, 0, 0, 0, 0}, 0, false},
		{validKM(wire.KeyEven, 16), 0, false},
	} {
		state, ok := ParseKMState(tc.b)
		if state != tc.state || ok != tc.ok {
			t.Errorf("ParseKMState(% x) = %d, %v; want %d, %v", tc.b, state, ok, tc.state, tc.ok)
		}
	}
	for s := KMStateUnsecured; s <= maxKMState; s++ {
		if got, ok := ParseKMState(AppendKMState(nil, s)); !ok || got != s {
			t.Errorf("state %d: round trip gave %d, %v", s, got, ok)
		}
	}
}

func TestKMStateErrors(t *testing.T) {
	for _, tc := range []struct {
		state uint32
		err   error
	}{
		{KMStateSecured, nil},
		{KMStateUnsecured, ErrNoPassphrase},
		{KMStateNoSecret, ErrNoPassphrase},
		{KMStateBadSecret, ErrBadPassphrase},
		{KMStateBadCryptoMode, ErrUnsupportedCipher},
		{KMStateSecuring, ErrInvalidKM},
		{77, ErrInvalidKM},
	} {
		if err := KMStateError(tc.state); !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
			t.Errorf("KMStateError(%d) = %v, want %v", tc.state, err, tc.err)
		}
	}
	for _, tc := range []struct {
		err   error
		state uint32
	}{
		{nil, KMStateSecured},
		{ErrNoPassphrase, KMStateNoSecret},
		{ErrBadPassphrase, KMStateBadSecret},
		{ErrInvalidKM, KMStateBadSecret},
		{ErrUnsupportedCipher, KMStateBadCryptoMode},
	} {
		wrapped := tc.err
		if wrapped != nil {
			wrapped = errors.Join(errors.New("srt crypt: receiver"), tc.err)
		}
		if s := KMStateFor(wrapped); s != tc.state {
			t.Errorf("KMStateFor(%v) = %d, want %d", tc.err, s, tc.state)
		}
	}
}
