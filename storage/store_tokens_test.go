package storage_test

import (
	"context"
	"testing"
	"time"
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
