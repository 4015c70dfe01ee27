package app

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeTestCert writes a self-signed certificate for 127.0.0.1, ::1 and localhost (its own CA)
// and its key, PEM, into dir as name.crt and name.key.
func writeTestCert(t testing.TB, dir, name string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "sluice test " + name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:    []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// certPool is a pool holding the certificates of a PEM file.
func certPool(t testing.TB, certFile string) *x509.CertPool {
	t.Helper()
	pemBytes, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		t.Fatalf("no certificate in %s", certFile)
	}
	return pool
}

// trustingClient is an HTTP client that trusts the certificate of certFile and speaks HTTP/2
// when the server offers it.
func trustingClient(t testing.TB, certFile string) *http.Client {
	t.Helper()
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: certPool(t, certFile)},
		ForceAttemptHTTP2: true,
	}}
}

// TestTLSSettings: --tls-cert and --tls-key (or their variables) come together, and a pair that
// cannot serve fails the parse with an error naming what is wrong: a missing file, a key of
// another certificate, a file that is not PEM.
func TestTLSSettings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cert, key := writeTestCert(t, dir, "a")
	otherCert, otherKey := writeTestCert(t, dir, "b")
	notPEM := filepath.Join(dir, "junk.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	noEnv := func(string) string { return "" }
	for _, c := range []struct {
		name string
		args []string
		env  map[string]string
		want string // "" for no error
	}{
		{"neither", nil, nil, ""},
		{"both flags", []string{"--tls-cert", cert, "--tls-key", key}, nil, ""},
		{"both variables", nil, map[string]string{"SLUICE_TLS_CERT": cert, "SLUICE_TLS_KEY": key}, ""},
		{"variable and flag", []string{"--tls-key", key}, map[string]string{"SLUICE_TLS_CERT": cert}, ""},
		{"second pair", []string{"--tls-cert", otherCert, "--tls-key", otherKey}, nil, ""},
		{"cert alone", []string{"--tls-cert", cert}, nil, "--tls-cert: set --tls-key (SLUICE_TLS_KEY) too"},
		{"key alone", nil, map[string]string{"SLUICE_TLS_KEY": key}, "--tls-key: set --tls-cert (SLUICE_TLS_CERT) too"},
		{"missing cert", []string{"--tls-cert", filepath.Join(dir, "none.crt"), "--tls-key", key}, nil, "read the certificate: open " + filepath.Join(dir, "none.crt") + ": no such file"},
		{"missing key", []string{"--tls-cert", cert, "--tls-key", filepath.Join(dir, "none.key")}, nil, "read the key: open " + filepath.Join(dir, "none.key") + ": no such file"},
		{"key of another certificate", []string{"--tls-cert", cert, "--tls-key", otherKey}, nil, "private key does not match public key"},
		{"cert not PEM", []string{"--tls-cert", notPEM, "--tls-key", key}, nil, "certificate " + notPEM + " with key " + key + ": tls: failed to find any PEM data in certificate input"},
		{"key not PEM", []string{"--tls-cert", cert, "--tls-key", notPEM}, nil, "failed to find any PEM data in key input"},
		{"key and cert swapped", []string{"--tls-cert", key, "--tls-key", cert}, nil, "--tls-cert/--tls-key: certificate " + key},
	} {
		getenv := noEnv
		if c.env != nil {
			getenv = func(k string) string { return c.env[k] }
		}
		cfg, err := ParseConfig("sluice", append([]string{"--data", dir}, c.args...), getenv, io.Discard)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && err == nil:
			t.Errorf("%s: no error, want one with %q", c.name, c.want)
		case c.want != "" && !strings.Contains(err.Error(), c.want):
			t.Errorf("%s: error %q, want %q in it", c.name, err, c.want)
		case c.want == "" && cfg.TLS.On() != (len(c.args)+len(c.env) > 0):
			t.Errorf("%s: TLS on %v", c.name, cfg.TLS.On())
		}
	}

	// A certificate that turned bad between the parse and the start fails Run before it
	// listens.
	gone := filepath.Join(dir, "gone.crt")
	data, _ := os.ReadFile(cert)
	if err := os.WriteFile(gone, data, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseConfig("sluice", []string{"--data", dir, "--addr", "127.0.0.1:0", "--tls-cert", gone, "--tls-key", key}, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	if err := Run(t.Context(), cfg, Options{}); err == nil || !strings.Contains(err.Error(), "--tls-cert/--tls-key: read the certificate") {
		t.Errorf("Run with a removed certificate: %v", err)
	}
}

// TestCertReload: the certificate source serves the pair it loaded, takes a new pair written
// over the files at its next check, and keeps serving the previous one when the files change
// to a pair that does not load.
func TestCertReload(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cert, key := writeTestCert(t, dir, "served")
	src, err := newCertSource(cert, key, 0, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	first := src.current().Leaf.SerialNumber

	// A renewal writes both files anew; the stamps (time and size) tell.
	newCert, newKey := writeTestCert(t, t.TempDir(), "renewed")
	later := time.Now().Add(time.Minute)
	copyFile(t, newCert, cert, later)
	copyFile(t, newKey, key, later)
	second := src.current().Leaf.SerialNumber
	if second.Cmp(first) == 0 {
		t.Fatalf("certificate not reloaded after its files changed (serial %v)", first)
	}

	// Half a renewal: a certificate whose key is not there yet. The renewed pair stays.
	_, strayKey := writeTestCert(t, t.TempDir(), "stray")
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
	slow, err := newCertSource(cert, key, time.Hour, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	copyFile(t, strayKey, key, later.Add(3*time.Minute))
	if got := slow.current().Leaf.SerialNumber; got.Cmp(second) != 0 {
		t.Errorf("checked before its period: serving serial %v, want %v", got, second)
	}

	// The configuration handed to the HTTPS ports: TLS 1.2 at least, h2 offered first.
	c := src.serverConfig()
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
