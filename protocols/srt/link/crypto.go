package link

import (
	"errors"

	"github.com/sluicemedia/sluice/protocols/srt/crypt"
)

// refresh returns the key refresh schedule of cfg (zero fields: libsrt's defaults).
func (c *Config) refresh() crypt.Refresh {
	return crypt.Refresh{Rate: c.KMRefreshRate, PreAnnounce: c.KMPreAnnounce}
}

// openCallerKM opens a caller's KMREQ on the listener side: the receiver of what the caller
// sends, and the sender of the other direction with the same keys (HSv5's reverse key
// exchange). A KM that does not open with the passphrase is REJ_BADSECRET, a malformed one
// REJ_ROGUE.
func openCallerKM(cfg *resolved, km []byte) (*crypt.Receiver, *crypt.Sender, Reject) {
	rcv, err := crypt.NewReceiver(cfg.Passphrase, km)
	if err == nil {
		var snd *crypt.Sender
		if snd, err = crypt.SenderFromKM(cfg.Passphrase, km, cfg.refresh()); err == nil {
			return rcv, snd, RejectNone
		}
	}
	if errors.Is(err, crypt.ErrBadPassphrase) {
		return nil, nil, RejectBadSecret
	}
	return nil, nil, RejectRogue
}

// kmStateReject maps the KM state a listener answered instead of our KM to the rejection it
// means.
func kmStateReject(state uint32) Reject {
	switch err := crypt.KMStateError(state); {
	case err == nil:
		return RejectNone
	case errors.Is(err, crypt.ErrBadPassphrase):
		return RejectBadSecret
	case errors.Is(err, crypt.ErrNoPassphrase):
		return RejectUnsecure
	}
	return RejectCrypto
}
