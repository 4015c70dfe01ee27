package crypt

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sluicemedia/sluice/protocols/srt/wire"
)

func TestRefreshResolve(t *testing.T) {
	for _, tc := range []struct {
		in        Refresh
		rate, pre uint32
		err       bool
	}{
		{Refresh{}, 1 << 24, 1 << 12, false},
		{Refresh{Rate: 2000, PreAnnounce: 500}, 2000, 500, false},
		{Refresh{Rate: 2000}, 2000, 999, false},
		{Refresh{Rate: 100000}, 100000, 4096, false},
		{Refresh{PreAnnounce: 100}, 1 << 24, 100, false},
		{Refresh{Rate: 3}, 3, 1, false},
		{Refresh{Rate: 2}, 0, 0, true},
		{Refresh{Rate: 1}, 0, 0, true},
		{Refresh{Rate: 2000, PreAnnounce: 1000}, 0, 0, true},
		{Refresh{PreAnnounce: 1 << 23}, 0, 0, true},
	} {
		rate, pre, err := tc.in.resolve()
		if (err != nil) != tc.err || (err != nil && !errors.Is(err, ErrRefreshRates)) || rate != tc.rate || pre != tc.pre {
			t.Errorf("%+v: %d, %d, %v; want %d, %d, error %v", tc.in, rate, pre, err, tc.rate, tc.pre, tc.err)
		}
	}
}

func TestNewSenderRefuses(t *testing.T) {
	for _, tc := range []struct {
		pass   string
		keyLen int
		r      Refresh
		want   error
	}{
		{"", 16, Refresh{}, ErrNoPassphrase},
		{"short", 16, Refresh{}, ErrPassphraseLength},
		{strings.Repeat("p", 81), 16, Refresh{}, ErrPassphraseLength},
		{testPass, 0, Refresh{}, ErrKeyLength},
		{testPass, 20, Refresh{}, ErrKeyLength},
		{testPass, 64, Refresh{}, ErrKeyLength},
		{testPass, 16, Refresh{Rate: 10, PreAnnounce: 5}, ErrRefreshRates},
	} {
		if _, err := NewSender(tc.pass, tc.keyLen, tc.r); !errors.Is(err, tc.want) {
			t.Errorf("NewSender(%d-byte passphrase, %d, %+v): %v, want %v", len(tc.pass), tc.keyLen, tc.r, err, tc.want)
		}
	}
}

// TestRefreshSchedule runs three key periods of 10 packets announced 3 packets ahead and checks,
// packet by packet, the KK bits, the announcements and the KM, while a Receiver that applies each
// announced KM (as the link's KMREQ would) decrypts everything, late packets of the old key too.
func TestRefreshSchedule(t *testing.T) {
	const rate, pre = 10, 3
	s, err := NewSender(testPass, 16, Refresh{Rate: rate, PreAnnounce: pre})
	if err != nil {
		t.Fatal(err)
	}
	first := s.KM(nil)
	r, err := NewReceiver(testPass, first)
	if err != nil {
		t.Fatal(err)
	}
	stale, err := NewReceiver(testPass, first) // never updated
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.NewChaCha8([32]byte{3})
	// What reaches the receiver, in order: packets, and the KMs the link sends on announce.
	type arrival struct {
		seq          uint32
		kk           wire.KeyIndex
		plain, ciphr []byte
		km           []byte
	}
	var sent []arrival
	var held *arrival // the last packet before each switch, delivered after the next one
	var trace strings.Builder
	for i := 1; i <= 3*rate; i++ {
		seq := uint32(1000 + i)
		plain := make([]byte, 188*7)
		_, _ = rng.Read(plain)
		p := bytes.Clone(plain)
		kk, announce := s.Encrypt(seq, p)
		k, err := ParseKM(s.KM(nil))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&trace, "%d:%v", i, kk)
		if announce {
			fmt.Fprintf(&trace, "!")
		}
		fmt.Fprintf(&trace, "/%v ", k.Keys)
		pk := arrival{seq: seq, kk: kk, plain: plain, ciphr: p}
		if i%rate == 0 {
			held = &pk
		} else {
			sent = append(sent, pk)
			if held != nil {
				sent = append(sent, *held)
				held = nil
			}
		}
		if announce {
			sent = append(sent, arrival{km: s.KM(nil)})
		}
	}
	// Key n encrypts packets n*rate+1 .. (n+1)*rate; the next key is announced (both keys in the
	// KM) after packet (n+1)*rate-pre and again at the switch; the old key leaves the KM pre
	// packets after the switch.
	want := "1:even/even 2:even/even 3:even/even 4:even/even 5:even/even 6:even/even 7:even!/both 8:even/both 9:even/both 10:even!/both " +
		"11:odd/both 12:odd/both 13:odd/odd 14:odd/odd 15:odd/odd 16:odd/odd 17:odd!/both 18:odd/both 19:odd/both 20:odd!/both " +
		"21:even/both 22:even/both 23:even/even 24:even/even 25:even/even 26:even/even 27:even!/both 28:even/both 29:even/both 30:even!/both "
	if trace.String() != want {
		t.Errorf("schedule:\n got %s\nwant %s", trace.String(), want)
	}
	lateOld := 0
	for _, a := range sent {
		if a.km != nil {
			if err := r.Update(a.km); err != nil {
				t.Fatal(err)
			}
			continue
		}
		p := bytes.Clone(a.ciphr)
		if err := r.Decrypt(a.kk, a.seq, p); err != nil {
			t.Fatalf("seq %d: %v", a.seq, err)
		}
		if !bytes.Equal(p, a.plain) {
			t.Fatalf("seq %d (KK %v): decrypted payload differs", a.seq, a.kk)
		}
		if a.seq%rate == 0 {
			lateOld++
		}
	}
	if lateOld != 2 {
		t.Errorf("%d packets of the old key decrypted after the switch, want 2", lateOld)
	}
	// The receiver without the refresh KMs fails on the odd key, and the even key of the third
	// period is a new one: decrypting with the first even key gives garbage.
	for _, pk := range sent {
		if pk.km != nil {
			continue
		}
		p := bytes.Clone(pk.ciphr)
		err := stale.Decrypt(pk.kk, pk.seq, p)
		switch {
		case pk.seq <= 1000+rate:
			if err != nil || !bytes.Equal(p, pk.plain) {
				t.Fatalf("seq %d: first key: %v", pk.seq, err)
			}
		case pk.kk == wire.KeyOdd:
			if !errors.Is(err, ErrUnknownKey) {
				t.Fatalf("seq %d: odd key without its KM: %v", pk.seq, err)
			}
		default:
			if err != nil || bytes.Equal(p, pk.plain) {
				t.Fatalf("seq %d: the third period's even key is the first one again", pk.seq)
			}
		}
	}
	if k, err := ParseKM(first); err != nil || k.Keys != wire.KeyEven {
		t.Fatalf("first KM: %v, %v", k.Keys, err)
	}
}
