package storage_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/storage"
)

func TestRevokedTokens(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	now := at(0)
	if err := s.RevokeToken(ctx, "old", now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeToken(ctx, "fresh", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeToken(ctx, "fresh", now.Add(time.Hour)); err != nil {
		t.Fatalf("revoking twice: %v", err)
	}
	for jti, want := range map[string]bool{"old": true, "fresh": true, "other": false} {
		if got, err := s.TokenRevoked(ctx, jti); got != want || err != nil {
			t.Errorf("TokenRevoked(%q) = %v, %v; want %v", jti, got, err, want)
		}
	}
	n, err := s.PruneRevoked(ctx, now)
	if err != nil || n != 1 {
		t.Errorf("PruneRevoked = %d, %v; want 1", n, err)
	}
	if got, _ := s.TokenRevoked(ctx, "old"); got {
		t.Error("expired revocation kept")
	}
	if got, _ := s.TokenRevoked(ctx, "fresh"); !got {
		t.Error("live revocation pruned")
	}
}

// TestRevocationState: every revocation write bumps the auth revision; Revocations reads the
// live revoked tokens and every user's "not before"; a "not before" never moves back; and a
// second handle on the same file (another process) sees the revision and the revocation stamp move.
func TestRevocationState(t *testing.T) {
	ctx := context.Background()
	target := storage.NewTestTarget(t)
	s, other := openTarget(t, target), openTarget(t, target)
	if rev, err := s.AuthRevision(ctx); rev != 0 || err != nil {
		t.Fatalf("AuthRevision of a new store = %d, %v", rev, err)
	}
	stamp, ok := s.RevocationStamp()
	if !ok {
		t.Fatal("no revocation stamp")
	}
	now := at(0)
	// Other writes leave the stamp alone.
	if err := s.SetSetting(ctx, "other", "x"); err != nil {
		t.Fatal(err)
	}
	if st, ok := s.RevocationStamp(); !ok || st != stamp {
		t.Errorf("a write that revokes nothing moved the revocation stamp: %v to %v", stamp, st)
	}
	if err := s.RevokeToken(ctx, "expired", now.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeToken(ctx, "live", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	got, err := s.RevokeUserTokens(ctx, "u1", now)
	if err != nil || !got.Equal(now.Truncate(time.Millisecond)) {
		t.Fatalf("RevokeUserTokens = %v, %v", got, err)
	}
	// A clock set back keeps the later time and changes nothing.
	if got, err := s.RevokeUserTokens(ctx, "u1", now.Add(-time.Hour)); err != nil || !got.Equal(now.Truncate(time.Millisecond)) {
		t.Fatalf("RevokeUserTokens with an earlier time = %v, %v", got, err)
	}
	if _, err := other.RevokeUserTokens(ctx, "u2", now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if st, ok := s.RevocationStamp(); !ok || st == stamp {
		t.Errorf("revocation stamp did not move after commits: %v %v", st, ok)
	}
	for name, h := range map[string]*storage.Store{"this": s, "other": other} {
		if rev, err := h.AuthRevision(ctx); rev != 4 || err != nil {
			t.Errorf("%s handle: AuthRevision = %d, %v; want 4", name, rev, err)
		}
	}
	r, err := s.Revocations(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	if r.Revision != 4 || len(r.Tokens) != 1 || !r.Tokens["live"].Equal(now.Add(time.Hour)) {
		t.Errorf("Revocations = %+v", r)
	}
	if len(r.NotBefore) != 2 || !r.NotBefore["u1"].Equal(now.Truncate(time.Millisecond)) ||
		!r.NotBefore["u2"].Equal(now.Add(time.Second).Truncate(time.Millisecond)) {
		t.Errorf("NotBefore = %v", r.NotBefore)
	}
	if nb, err := other.TokensNotBefore(ctx, "u1"); err != nil || !nb.Equal(now.Truncate(time.Millisecond)) {
		t.Errorf("TokensNotBefore = %v, %v", nb, err)
	}
	if nb, err := other.TokensNotBefore(ctx, "nobody"); err != nil || !nb.IsZero() {
		t.Errorf("TokensNotBefore of a user without one = %v, %v", nb, err)
	}
}
