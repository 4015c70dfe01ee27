package app

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// TestTLSSettings: --tls-cert and --tls-key (or their variables) come together, and a pair that
// cannot serve fails the parse with an error naming what is wrong: a missing file, a key of
// another certificate, a file that is not PEM.
func TestTLSSettings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cert, key := testutil.WriteCert(t, dir, "a")
	otherCert, otherKey := testutil.WriteCert(t, dir, "b")
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
