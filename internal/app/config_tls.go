package app

import (
	"errors"
	"fmt"
)

// TLSSettings are the settings of HTTPS (issue 16): a certificate and its key, PEM files. With
// both set, the API port and every player's port serve HTTPS, with HTTP/2 (ALPN h2) and
// HTTP/1.1; with neither, plain HTTP/1.1 as before. One without the other is an error.
type TLSSettings struct {
	// Cert is the certificate chain, PEM (the server's certificate first, then the
	// intermediates). Default: empty, plain HTTP.
	Cert string
	// Key is the certificate's private key, PEM (PKCS #1, PKCS #8 or SEC 1). Default: empty.
	Key string

	// certs serves the certificate once Run loaded it; copies of the Config share it.
	certs *certSource
}

// On says whether HTTPS is configured.
func (t *TLSSettings) On() bool { return t.Cert != "" || t.Key != "" }

// tlsSettings are the flags and variables of TLSSettings (a block of its own in --help).
func tlsSettings() []setting {
	str := func(f func(*Config) *string) func(*Config, string) error {
		return func(c *Config, v string) error { *f(c) = v; return nil }
	}
	return []setting{
		{"tls-cert", "SLUICE_TLS_CERT", "", "certificate chain, PEM file: with --tls-key the API and player ports serve HTTPS with HTTP/2 (empty: plain HTTP)", str(func(c *Config) *string { return &c.TLS.Cert })},
		{"tls-key", "SLUICE_TLS_KEY", "", "private key of --tls-cert, PEM file (empty: plain HTTP)", str(func(c *Config) *string { return &c.TLS.Key })},
	}
}

// validateTLS checks that the certificate and key come together, can be read and match, so
// that a bad pair fails the start instead of every handshake.
func (c *Config) validateTLS() error {
	t := &c.TLS
	switch {
	case t.Cert == "" && t.Key == "":
		return nil
	case t.Key == "":
		return errors.New("--tls-cert: set --tls-key (SLUICE_TLS_KEY) too, or neither for plain HTTP")
	case t.Cert == "":
		return errors.New("--tls-key: set --tls-cert (SLUICE_TLS_CERT) too, or neither for plain HTTP")
	}
	if _, err := loadKeyPair(t.Cert, t.Key); err != nil {
		return fmt.Errorf("--tls-cert/--tls-key: %w", err)
	}
	return nil
}
