package crypt

import (
	"bytes"
	"errors"
	"testing"

	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

// The captures under testdata are real sessions between two srt-live-transmit (libsrt 1.5.1)
// on loopback, sending a known MPEG-TS clip; testdata/README.md says how they were made. No SRT
// stack of ours is involved: the tests find the caller's KMREQ in its conclusion handshake, open
// it with the passphrase, and decrypt libsrt's data packets.

// decryptCapture decrypts every data packet the capture's data sender sent, in capture order,
// applying the KM refreshes that sender announced, and checks each payload becomes MPEG-TS.
// It returns the packets decrypted per key.
func decryptCapture(t *testing.T, name string, evs []srtEvent, r *Receiver, dataFrom uint16) map[wire.KeyIndex]int {
	t.Helper()
	perKey := map[wire.KeyIndex]int{}
	var plainTS int
	for i, e := range evs {
		if e.from != dataFrom {
			continue
		}
		if e.refresh && e.kmCmd == extKMREQ {
			if err := r.Update(e.km); err != nil {
				t.Fatalf("%s: event %d: refresh KM: %v", name, i, err)
			}
			continue
		}
		if e.data == nil {
			continue
		}
		d := e.data
		if isTS(d.payload) {
			plainTS++
		}
		p := bytes.Clone(d.payload)
		if err := r.Decrypt(d.kk, d.seq, p); err != nil {
			t.Fatalf("%s: seq %d, KK %v: %v", name, d.seq, d.kk, err)
		}
		if !isTS(p) {
			t.Fatalf("%s: seq %d, KK %v, %d bytes: decrypted payload is not MPEG-TS", name, d.seq, d.kk, len(p))
		}
		perKey[d.kk]++
	}
	// A ciphertext looks like TS by chance with odds of 1 in 256 per TS packet in it.
	if total := perKey[wire.KeyEven] + perKey[wire.KeyOdd]; plainTS > total/20 {
		t.Errorf("%s: %d of %d data packets are MPEG-TS before decryption", name, plainTS, total)
	}
	return perKey
}

func TestLibsrtCaptures(t *testing.T) {
	for _, tc := range []struct {
		file   string
		keyLen int
		// dataFromCaller: the caller sends; otherwise the listener sends, with the caller's keys (HSv5).
		dataFromCaller bool
	}{
		{"aes128.pcap", 16, true},
		{"aes192.pcap", 24, true},
		{"aes256.pcap", 32, true},
		{"listener-sends.pcap", 16, false},
	} {
		t.Run(tc.file, func(t *testing.T) {
			evs := loadCapture(t, tc.file)
			km, caller := handshakeKM(t, evs)
			k, err := ParseKM(km)
			if err != nil {
				t.Fatal(err)
			}
			if k.KeyLen != tc.keyLen || k.Keys != wire.KeyEven || len(km) != KMHeaderLen+SaltLen+WrapICVLen+tc.keyLen {
				t.Fatalf("libsrt KM: %d bytes, %v key of %d", len(km), k.Keys, k.KeyLen)
			}
			// Our sender's KM has libsrt's header byte for byte (the KK, lengths, cipher, SE).
			ours, err := NewSender(testPass, tc.keyLen, Refresh{})
			if err != nil {
				t.Fatal(err)
			}
			if got := ours.KM(nil); !bytes.Equal(got[:KMHeaderLen], km[:KMHeaderLen]) || len(got) != len(km) {
				t.Errorf("our KM header % x (%d bytes), libsrt's % x (%d bytes)", got[:KMHeaderLen], len(got), km[:KMHeaderLen], len(km))
			}

			if _, err := NewReceiver("not-the-passphrase", km); !errors.Is(err, ErrBadPassphrase) {
				t.Fatalf("wrong passphrase: %v, want ErrBadPassphrase", err)
			}
			r, err := NewReceiver(testPass, km)
			if err != nil {
				t.Fatal(err)
			}
			if r.KeyLen() != tc.keyLen {
				t.Fatalf("KeyLen %d, want %d", r.KeyLen(), tc.keyLen)
			}
			dataFrom := caller
			if !tc.dataFromCaller {
				dataFrom = otherPort(t, evs, caller)
			}
			perKey := decryptCapture(t, tc.file, evs, r, dataFrom)
			if perKey[wire.KeyEven] < 90 || len(perKey) != 1 {
				t.Fatalf("decrypted %v packets per key, want ≥ 90, all with the even key", perKey)
			}

			// Our Sender made from libsrt's KM encrypts the plaintext to libsrt's very ciphertext.
			s, err := SenderFromKM(testPass, km, Refresh{})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(s.KM(nil), km) {
				t.Errorf("SenderFromKM(libsrt KM).KM() differs from libsrt's KM")
			}
			n := 0
			for _, e := range evs {
				if e.data == nil || e.from != dataFrom || e.data.rexmit {
					continue
				}
				p := bytes.Clone(e.data.payload)
				if err := r.Decrypt(e.data.kk, e.data.seq, p); err != nil {
					t.Fatal(err)
				}
				if kk, _ := s.Encrypt(e.data.seq, p); kk != e.data.kk || !bytes.Equal(p, e.data.payload) {
					t.Fatalf("seq %d: our encryption (KK %v) differs from libsrt's (KK %v)", e.data.seq, kk, e.data.kk)
				}
				n++
			}
			if n < 90 {
				t.Fatalf("re-encrypted %d packets", n)
			}
		})
	}
}

// otherPort returns the UDP port of the capture's other party.
func otherPort(t *testing.T, evs []srtEvent, port uint16) uint16 {
	t.Helper()
	for _, e := range evs {
		if e.from != port {
			return e.from
		}
	}
	t.Fatal("one party only in the capture")
	return 0
}

// The refresh capture: libsrt with kmrefreshrate=200&kmpreannounce=50 announces each new key in
// a KMREQ with both keys, then switches even → odd → (new) even: every packet decrypts across
// the switches, and without the refresh KMs none after the first switch does.
func TestLibsrtRefresh(t *testing.T) {
	evs := loadCapture(t, "refresh.pcap")
	km, caller := handshakeKM(t, evs)
	r, err := NewReceiver(testPass, km)
	if err != nil {
		t.Fatal(err)
	}
	stale, err := NewReceiver(testPass, km)
	if err != nil {
		t.Fatal(err)
	}
	var refreshes int
	for _, e := range evs {
		if e.from == caller && e.refresh && e.kmCmd == extKMREQ {
			refreshes++
			k, err := ParseKM(e.km)
			if err != nil || k.Keys != wire.KeyBoth || k.KeyLen != 16 {
				t.Fatalf("refresh KM: %v keys of %d: %v", k.Keys, k.KeyLen, err)
			}
		}
	}
	if refreshes < 2 {
		t.Fatalf("%d KM refreshes in the capture, want 2", refreshes)
	}
	perKey := decryptCapture(t, "refresh.pcap", evs, r, caller)
	if perKey[wire.KeyEven] < 250 || perKey[wire.KeyOdd] < 150 {
		t.Fatalf("decrypted %v packets per key, want ≥ 250 even and ≥ 150 odd", perKey)
	}
	// The stale receiver holds the handshake's even key only.
	var switches, firstPeriod, later int
	prev := wire.KeyEven
	for _, e := range evs {
		if e.data == nil || e.from != caller {
			continue
		}
		if e.data.kk != prev {
			switches++
			prev = e.data.kk
		}
		p := bytes.Clone(e.data.payload)
		err := stale.Decrypt(e.data.kk, e.data.seq, p)
		switch {
		case switches == 0:
			if err != nil || !isTS(p) {
				t.Fatalf("seq %d: first period with the handshake key: %v", e.data.seq, err)
			}
			firstPeriod++
		case e.data.kk == wire.KeyOdd:
			if !errors.Is(err, ErrUnknownKey) {
				t.Fatalf("seq %d: odd packet without the refresh KM: %v, want ErrUnknownKey", e.data.seq, err)
			}
		default:
			if err != nil || isTS(p) {
				t.Fatalf("seq %d: even packet after the odd period decrypts with the first even key (%v)", e.data.seq, err)
			}
			later++
		}
	}
	if switches < 2 || firstPeriod < 150 || later < 50 {
		t.Fatalf("%d key switches, %d packets before the first, %d even ones after the odd period", switches, firstPeriod, later)
	}
}

// Without enforced encryption libsrt answers a KM it cannot open with the short KMRSP.
func TestLibsrtKMState(t *testing.T) {
	for _, tc := range []struct {
		file  string
		state uint32
		err   error
	}{
		{"badsecret.pcap", KMStateBadSecret, ErrBadPassphrase},
		{"nosecret.pcap", KMStateNoSecret, ErrNoPassphrase},
	} {
		evs := loadCapture(t, tc.file)
		km, _ := handshakeKM(t, evs)
		if _, ok := ParseKMState(km); ok {
			t.Fatalf("%s: the KMREQ reads as a KM state", tc.file)
		}
		var rsp []byte
		for _, e := range evs {
			if e.kmCmd == extKMRSP {
				rsp = e.km
			}
		}
		state, ok := ParseKMState(rsp)
		if !ok || state != tc.state {
			t.Fatalf("%s: KMRSP % x: state %d, %v; want %d", tc.file, rsp, state, ok, tc.state)
		}
		if err := KMStateError(state); !errors.Is(err, tc.err) {
			t.Errorf("%s: KMStateError(%d) = %v, want %v", tc.file, state, err, tc.err)
		}
		if got := AppendKMState(nil, tc.state); !bytes.Equal(got, rsp) {
			t.Errorf("%s: AppendKMState(%d) = % x, libsrt sent % x", tc.file, tc.state, got, rsp)
		}
	}
	// The bad-secret listener's passphrase does not open the caller's KM here either.
	km, _ := handshakeKM(t, loadCapture(t, "badsecret.pcap"))
	_, err := NewReceiver("not-the-passphrase", km)
	if !errors.Is(err, ErrBadPassphrase) || KMStateFor(err) != KMStateBadSecret {
		t.Errorf("bad-secret KM with the listener's passphrase: %v", err)
	}
}
