package httpserve

import (
	"crypto/tls"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// TestCertReload: the certificate source serves the pair it loaded, takes a new pair written
// over the files at its next check, and keeps serving the previous one when the files change
// to a pair that does not load.
func TestCertReload(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cert, key := testutil.WriteCert(t, dir, "served")
	src, err := NewCertSource(cert, key, 0, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	first := src.current().Leaf.SerialNumber

	// A renewal writes both files anew; the stamps (time and size) tell.
	newCert, newKey := testutil.WriteCert(t, t.TempDir(), "renewed")
	later := time.Now().Add(time.Minute)
	copyFile(t, newCert, cert, later)
	copyFile(t, newKey, key, later)
	second := src.current().Leaf.SerialNumber
	if second.Cmp(first) == 0 {
		t.Fatalf("certificate not reloaded after its files changed (serial %v)", first)
	}

	// Half a renewal: a certificate whose key is not there yet. The renewed pair stays.
	_, strayKey := testutil.WriteCert(t, t.TempDir(), "stray")
	copyFile(t, strayKey, key, later.Add(time.Minute))
	if got := src.current().Leaf.SerialNumber; got.Cmp(second) != 0 {
		t.Errorf("after a mismatched key: serving serial %v, want the previous %v", got, second)
	}
	// The key fixed: the renewed pair loads again.
	copyFile(t, newKey, key, later.Add(2*time.Minute))
	if got := src.current().Leaf.SerialNumber; got.Cmp(second) != 0 {
		t.Errorf("after the key was fixed: serving serial %v, want %v", got, second)
	}

	// With a period, a check waits for it.
	slow, err := NewCertSource(cert, key, time.Hour, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	copyFile(t, strayKey, key, later.Add(3*time.Minute))
	if got := slow.current().Leaf.SerialNumber; got.Cmp(second) != 0 {
		t.Errorf("checked before its period: serving serial %v, want %v", got, second)
	}

	// The configuration handed to the HTTPS ports: TLS 1.2 at least, h2 offered first.
	c := src.ServerConfig()
	if c.MinVersion != tls.VersionTLS12 || len(c.NextProtos) != 2 || c.NextProtos[0] != "h2" || c.NextProtos[1] != "http/1.1" {
		t.Errorf("TLS config: min version %x, ALPN %q", c.MinVersion, c.NextProtos)
	}
}

// copyFile copies src over dst and sets dst's modification time to mod.
func copyFile(t *testing.T, src, dst string, mod time.Time) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(dst, mod, mod); err != nil {
		t.Fatal(err)
	}
}
