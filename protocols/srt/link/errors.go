package link

import (
	"errors"
	"fmt"
)

var (
	// ErrClosed is returned by operations on a connection or listener closed on our side.
	ErrClosed = errors.New("srt: closed")
	// ErrPeerClosed is returned by Write after the peer shut the connection down (Read returns
	// io.EOF then, once what arrived before is delivered).
	ErrPeerClosed = errors.New("srt: connection shut down by peer")
	// ErrPeerIdle is returned when the peer sent nothing, not even a keep-alive, for
	// PeerIdleTimeout.
	ErrPeerIdle = errors.New("srt: peer idle timeout")
	// ErrConnectTimeout is returned by Dial when the listener did not answer within
	// ConnectTimeout, and by Rendezvous when the peer did not.
	ErrConnectTimeout = errors.New("srt: connect timeout")
	// ErrMessageTooLong is returned by Write for a message over PayloadSize.
	ErrMessageTooLong = errors.New("srt: message longer than the payload size")
	// ErrBadPassphrase matches a rejection because the passphrases differ (REJ_BADSECRET).
	ErrBadPassphrase = errors.New("srt: wrong passphrase")
	// ErrNoPassphrase matches a rejection because only one side has a passphrase
	// (REJ_UNSECURE): the peer needs one we lack, or refuses the one we have.
	ErrNoPassphrase = errors.New("srt: passphrase required or unexpected")
	// ErrVersion is returned by Dial when the listener speaks only the HSv4 handshake, and by
	// Rendezvous for an HSv4 peer.
	ErrVersion = errors.New("srt: peer handshake version not supported")
	// ErrProtocol is returned when the peer's handshake answer cannot be used.
	ErrProtocol = errors.New("srt: protocol error")
	// ErrConfig is returned by Listen and Dial for a Config they cannot use.
	ErrConfig = errors.New("srt: invalid configuration")
)

// RejectError is returned by Dial when the listener refused the connection, and by Rendezvous
// when either side refused it.
type RejectError struct {
	Reason Reject
	Addr   string // the listener's address
}

// Error says who refused and why, e.g. "srt: 127.0.0.1:9000 rejected the connection: 1404
// resource not found".
func (e *RejectError) Error() string {
	return fmt.Sprintf("srt: %s rejected the connection: %v", e.Addr, e.Reason)
}

// Is makes errors.Is(err, ErrBadPassphrase) and errors.Is(err, ErrNoPassphrase) true for the
// matching reasons.
func (e *RejectError) Is(target error) bool {
	switch target {
	case ErrBadPassphrase:
		return e.Reason == RejectBadSecret
	case ErrNoPassphrase:
		return e.Reason == RejectUnsecure
	case ErrVersion:
		return e.Reason == RejectVersion
	}
	return false
}
