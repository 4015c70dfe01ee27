package app

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/sluicemedia/sluice/internal/httpserve"
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
	certs *httpserve.CertSource
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
	if _, err := httpserve.LoadKeyPair(t.Cert, t.Key); err != nil {
		return fmt.Errorf("--tls-cert/--tls-key: %w", err)
	}
	return nil
}

// startTLS loads the certificate of c.TLS when HTTPS is configured; copies of c made after it
// share the source.
func (c *Config) startTLS(log *slog.Logger) error {
	if !c.TLS.On() {
		return nil
	}
	certs, err := httpserve.NewCertSource(c.TLS.Cert, c.TLS.Key, httpserve.CertCheckEvery, log.With("part", "tls"))
	if err != nil {
		return fmt.Errorf("--tls-cert/--tls-key: %w", err)
	}
	c.TLS.certs = certs
	return nil
}

// scheme is "https" when the API and player ports serve TLS, else "http".
func (t *TLSSettings) scheme() string {
	if t.certs != nil {
		return "https"
	}
	return "http"
}

// serve runs srv on ln: HTTPS with HTTP/2 when t has a certificate, else plain HTTP/1.1.
// ln may be a capped listener (connlimit): TLS wraps each of its connections, so ALPN and the
// HTTP/2 upgrade are net/http's own (ServeTLS configures h2 because TLSNextProto is nil).
func (t *TLSSettings) serve(srv *http.Server, ln net.Listener) error {
	if t.certs == nil {
		return srv.Serve(ln)
	}
	srv.TLSConfig = t.certs.ServerConfig()
	return srv.ServeTLS(ln, "", "")
}
