package link

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

const testPassphrase = "sluice-secret-1"

// TestInteropEncrypted runs the four libsrt pairings with each key length.
func TestInteropEncrypted(t *testing.T) {
	for _, kl := range []int{16, 24, 32} {
		t.Run(fmt.Sprintf("pbkeylen%d", kl), func(t *testing.T) {
			t.Run("libsrt-caller-sends", func(t *testing.T) { interopCallerSendsKL(t, testPassphrase, kl) })
			t.Run("libsrt-listener-sends", func(t *testing.T) { interopListenerSends(t, testPassphrase, kl) })
			t.Run("libsrt-caller-reads", func(t *testing.T) { interopCallerReads(t, testPassphrase, kl) })
			t.Run("libsrt-listener-reads", func(t *testing.T) { interopListenerReads(t, testPassphrase, kl) })
		})
	}
}

// TestEncryptedOursToOurs checks each key length between our own caller and listener, in
// both directions at once.
func TestEncryptedOursToOurs(t *testing.T) {
	for _, kl := range []int{0, 16, 24, 32} {
		ln := listen(t, Config{Passphrase: testPassphrase}, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := Dial(ctx, ln.Addr().String(), Config{Passphrase: testPassphrase, PBKeyLen: kl})
		if err != nil {
			t.Fatalf("pbkeylen %d: %v", kl, err)
		}
		s, req, err := ln.Accept(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !req.Encrypted() || !c.Encrypted() || !s.Encrypted() {
			t.Errorf("pbkeylen %d: not encrypted", kl)
		}
		for i := range 50 {
			if _, err := fmt.Fprintf(c, "up %d", i); err != nil {
				t.Fatal(err)
			}
			if _, err := fmt.Fprintf(s, "down %d", i); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 50 {
			for _, x := range []struct {
				c    *Conn
				want string
			}{{s, fmt.Sprintf("up %d", i)}, {c, fmt.Sprintf("down %d", i)}} {
				buf := make([]byte, 100)
				n, err := x.c.Read(buf)
				if err != nil || string(buf[:n]) != x.want {
					t.Fatalf("pbkeylen %d: read %q %v, want %q", kl, buf[:n], err, x.want)
				}
			}
		}
		if st := s.Stats(); st.PktRecvUndecrypt != 0 {
			t.Errorf("undecryptable %d", st.PktRecvUndecrypt)
		}
		c.Close()
		s.Close()
		cancel()
	}
}

// TestKeyRefresh: keys switch every 300 packets; every payload decrypts across the switches,
// our sender to libsrt and libsrt's sender to us.
func TestKeyRefresh(t *testing.T) {
	clip := chunks(testClip(t))
	all := bytes.Join(clip, nil)
	t.Run("ours-to-libsrt", func(t *testing.T) {
		port := udpPort(t)
		s := startSLT(t, fmt.Sprintf("srt://%s?mode=listener&passphrase=%s", loopback(port), testPassphrase), "file://con")
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c, err := dialRetry(ctx, loopback(port), Config{Passphrase: testPassphrase, KMRefreshRate: 300, KMPreAnnounce: 100})
		if err != nil {
			t.Fatal(err)
		}
		if err := pace(ctx, clip, interopRate, func(b []byte) error { _, err := c.Write(b); return err }); err != nil {
			t.Fatal(err)
		}
		c.mu.Lock()
		sent := c.kmSent
		c.mu.Unlock()
		checkSLTOutput(t, s, c, all)
		if sent < 2 {
			t.Errorf("%d key refreshes announced for %d packets", sent, len(clip))
		}
	})
	t.Run("libsrt-to-ours", func(t *testing.T) {
		ln := listen(t, Config{Passphrase: testPassphrase}, nil)
		in := udpPort(t)
		startSLT(t, "udp://"+loopback(in), fmt.Sprintf("srt://%s?passphrase=%s&kmrefreshrate=300&kmpreannounce=100", ln.Addr(), testPassphrase))
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c, _ := accept(ctx, t, ln)
		relayClip(ctx, t, c, in, clip, 200*time.Millisecond, "libsrt to ours")
		c.mu.Lock()
		applied := c.kmApplied
		c.mu.Unlock()
		if st := c.Stats(); st.PktRecvUndecrypt != 0 || applied < 2 {
			t.Errorf("undecryptable %d, key refreshes applied %d", st.PktRecvUndecrypt, applied)
		}
	})
}

// TestPassphraseMismatch: a wrong passphrase, or one on one side only, is refused on both
// sides with the right reason.
func TestPassphraseMismatch(t *testing.T) {
	ctx := context.Background()
	// Each pair of passphrases, with what our side reports and what libsrt reports.
	cases := []struct {
		listener, caller string
		want             error
		libsrtWant       string
	}{
		{testPassphrase, "another-secret", ErrBadPassphrase, "Incorrect passphrase"},
		{testPassphrase, "", ErrNoPassphrase, "Password required or unexpected"},
		{"", testPassphrase, ErrNoPassphrase, "Password required or unexpected"},
	}
	t.Run("ours-to-ours", func(t *testing.T) {
		for _, c := range cases {
			ln := listen(t, Config{Passphrase: c.listener}, func(*Request) Reject {
				t.Error("decide ran for a connection the encryption check refuses")
				return RejectNone
			})
			_, err := Dial(ctx, ln.Addr().String(), Config{Passphrase: c.caller})
			if !errors.Is(err, c.want) {
				t.Errorf("listener %q caller %q: %v, want %v", c.listener, c.caller, err, c.want)
			}
		}
	})
	t.Run("ours-to-libsrt", func(t *testing.T) {
		for _, c := range cases {
			port := udpPort(t)
			startSLT(t, fmt.Sprintf("srt://%s?mode=listener%s", loopback(port), kmQuery(c.listener, 0)), "file://con")
			var err error
			for range 20 { // until srt-live-transmit listens
				_, err = Dial(ctx, loopback(port), Config{Passphrase: c.caller, ConnectTimeout: 500 * time.Millisecond})
				if !errors.Is(err, ErrConnectTimeout) {
					break
				}
			}
			if !errors.Is(err, c.want) {
				t.Errorf("libsrt listener %q, our caller %q: %v, want %v", c.listener, c.caller, err, c.want)
			}
		}
	})
	t.Run("libsrt-to-ours", func(t *testing.T) {
		for _, c := range cases {
			ln := listen(t, Config{Passphrase: c.listener}, nil)
			s := startSLT(t, "-a:no", "-t:3", fmt.Sprintf("srt://%s?%s", ln.Addr(), strings.TrimPrefix(kmQuery(c.caller, 0), "&")), "file://con")
			select {
			case <-s.done:
			case <-time.After(10 * time.Second):
				t.Fatal("srt-live-transmit did not give up")
			}
			if out := s.stderr(); !strings.Contains(out, c.libsrtWant) {
				t.Errorf("our listener %q, libsrt caller %q: libsrt did not report %q:\n%s", c.listener, c.caller, c.libsrtWant, out)
			}
		}
	})
}
