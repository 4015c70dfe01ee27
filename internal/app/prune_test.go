package app

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/storage"
)

// TestPruneRevokedTokens: the server forgets revoked tokens once they have expired, at start
// and then on its interval, and keeps those still valid.
func TestPruneRevokedTokens(t *testing.T) {
	ctx := context.Background()
	st, err := storage.Open(filepath.Join(t.TempDir(), "sluice.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	if err := st.RevokeToken(ctx, "expired", now.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := st.RevokeToken(ctx, "soon", now.Add(300*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := st.RevokeToken(ctx, "live", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	revoked := func(jti string) bool {
		got, err := st.TokenRevoked(ctx, jti)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	stop := startPruning(st, 100*time.Millisecond, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer stop()
	testutil.Eventually(t, 5*time.Second, "the expired revocation forgotten at start", func() bool { return !revoked("expired") })
	testutil.Eventually(t, 5*time.Second, "the revocation that expired since forgotten", func() bool { return !revoked("soon") })
	if !revoked("live") {
		t.Fatal("a revocation of a token still valid was forgotten")
	}
}
