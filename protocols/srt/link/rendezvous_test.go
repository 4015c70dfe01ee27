package link

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"
)

// rdvPair makes a rendezvous between two sluice sockets on loopback ports, with cfgA and cfgB
// and our cookies (0: random); it returns both sides' results.
func rdvPair(t testing.TB, cfgA, cfgB Config, cookieA, cookieB uint32) (a, b *Conn, errA, errB error) {
	t.Helper()
	pa, pb := udpPort(t), udpPort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		a, errA = rendezvousCookie(ctx, loopback(pa), loopback(pb), cfgA, cookieA)
	}()
	go func() {
		defer wg.Done()
		b, errB = rendezvousCookie(ctx, loopback(pb), loopback(pa), cfgB, cookieB)
	}()
	wg.Wait()
	for _, c := range []*Conn{a, b} {
		if c != nil {
			t.Cleanup(func() { _ = c.Close() })
		}
	}
	return a, b, errA, errB
}

// exchange writes n numbered messages each way and checks that each side reads them all, in
// order.
func exchange(t testing.TB, a, b *Conn, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for _, d := range []struct {
		name     string
		from, to *Conn
	}{{"a to b", a, b}, {"b to a", b, a}} {
		wg.Add(2)
		want := make([][]byte, n)
		for i := range want {
			want[i] = bytes.Repeat([]byte(fmt.Sprintf("%s %06d|", d.name, i)), 1+i%80)
		}
		go func() {
			defer wg.Done()
			for _, m := range want {
				if _, err := d.from.Write(m); err != nil {
					t.Errorf("%s: write: %v", d.name, err)
					return
				}
				time.Sleep(200 * time.Microsecond)
			}
		}()
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			got, err := readAll(ctx, d.to, len(bytes.Join(want, nil)))
			if err != nil {
				t.Errorf("%s: after %d of %d messages: %v", d.name, len(got), n, err)
				return
			}
			if len(got) != n {
				t.Errorf("%s: %d messages, want %d", d.name, len(got), n)
				return
			}
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					t.Errorf("%s: message %d differs", d.name, i)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestRendezvousLoopback: two sluice sockets meet, without and with a passphrase, with a stream
// id, and carry data both ways; each side's latency is the larger wish.
func TestRendezvousLoopback(t *testing.T) {
	for _, c := range []struct {
		name       string
		passphrase string
		sid        string
	}{
		{"plain", "", ""},
		{"passphrase", "rendezvous-secret", ""},
		{"stream id", "rendezvous-secret", "rdv/live/cam1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b, errA, errB := rdvPair(t,
				Config{Latency: 80 * time.Millisecond, Passphrase: c.passphrase, StreamID: c.sid},
				Config{Latency: 150 * time.Millisecond, Passphrase: c.passphrase, StreamID: c.sid},
				0, 0)
			if errA != nil || errB != nil {
				t.Fatalf("rendezvous: %v / %v", errA, errB)
			}
			for _, x := range []*Conn{a, b} {
				if x.Latency() != 150*time.Millisecond || x.PeerLatency() != 150*time.Millisecond {
					t.Errorf("latency %v / %v, want 150 ms both ways", x.Latency(), x.PeerLatency())
				}
				if x.Encrypted() != (c.passphrase != "") || x.StreamID() != c.sid {
					t.Errorf("encrypted %v stream id %q", x.Encrypted(), x.StreamID())
				}
			}
			if a.RemoteAddr().String() != b.LocalAddr().String() || b.RemoteAddr().String() != a.LocalAddr().String() {
				t.Errorf("addresses %v-%v, %v-%v", a.LocalAddr(), a.RemoteAddr(), b.LocalAddr(), b.RemoteAddr())
			}
			exchange(t, a, b, 500)
		})
	}
}

var _ = errors.Is
var _ net.Addr

// TestInteropRendezvousLibsrtSends: libsrt in rendezvous mode → our Rendezvous.
func TestInteropRendezvousLibsrtSends(t *testing.T) {
	for _, pass := range []string{"", "interop-secret"} {
		t.Run(fmt.Sprintf("passphrase=%q", pass), func(t *testing.T) {
			clip := chunks(testClip(t))
			in, ours, its := udpPort(t), udpPort(t), udpPort(t)
			startSLT(t, "udp://"+loopback(in), fmt.Sprintf("srt://%s?mode=rendezvous&port=%d&latency=200%s", loopback(ours), its, kmQuery(pass, 0)))
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c, err := Rendezvous(ctx, loopback(ours), loopback(its), Config{Latency: 120 * time.Millisecond, Passphrase: pass})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Latency() != 200*time.Millisecond || c.Encrypted() != (pass != "") {
				t.Errorf("latency %v encrypted %v", c.Latency(), c.Encrypted())
			}
			relayClip(ctx, t, c, in, clip, 300*time.Millisecond, "libsrt rendezvous to ours")
		})
	}
}

// TestInteropRendezvousLibsrtReads: our Rendezvous → libsrt in rendezvous mode.
func TestInteropRendezvousLibsrtReads(t *testing.T) {
	for _, pass := range []string{"", "interop-secret"} {
		t.Run(fmt.Sprintf("passphrase=%q", pass), func(t *testing.T) {
			clip := chunks(testClip(t))
			all := bytes.Join(clip, nil)
			ours, its := udpPort(t), udpPort(t)
			s := startSLT(t, fmt.Sprintf("srt://%s?mode=rendezvous&port=%d%s", loopback(ours), its, kmQuery(pass, 0)), "file://con")
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c, err := Rendezvous(ctx, loopback(ours), loopback(its), Config{Latency: 200 * time.Millisecond, Passphrase: pass})
			if err != nil {
				t.Fatal(err)
			}
			if err := pace(ctx, clip, interopRate, func(b []byte) error { _, err := c.Write(b); return err }); err != nil {
				t.Fatal(err)
			}
			checkSLTOutput(t, s, c, all)
		})
	}
}
