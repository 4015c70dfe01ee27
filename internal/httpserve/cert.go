package httpserve

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"
)

// CertCheckEvery is how often a handshake may look whether the certificate or key file changed
// (10 s): a renewed certificate (certbot, cert-manager) is served within it of being written,
// without a restart or a signal; a check costs two stat calls.
const CertCheckEvery = 10 * time.Second

// LoadKeyPair reads a PEM certificate chain and its key, and checks that they match.
func LoadKeyPair(certFile, keyFile string) (*tls.Certificate, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("read the certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("read the key: %w", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("certificate %s with key %s: %w", certFile, keyFile, err)
	}
	return &pair, nil
}

// fileStamp is what tells that a file changed: its modification time and size.
type fileStamp struct {
	mod  time.Time
	size int64
}

func stampOf(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{fi.ModTime(), fi.Size()}
}

// CertSource serves a certificate and key files to handshakes, and loads the
// files again when they changed (checked at most every CertCheckEvery, by a handshake). A pair
// that fails to load (half written, a key that does not match) is logged and the previous one
// kept; the next check tries again.
type CertSource struct {
	certFile, keyFile string
	every             time.Duration
	log               *slog.Logger

	mu        sync.Mutex
	cert      *tls.Certificate
	stamps    [2]fileStamp
	checked   time.Time
	badStamps [2]fileStamp // the stamps of a pair that failed to load, not tried again
}

// NewCertSource loads the pair once; an error fails the start.
func NewCertSource(certFile, keyFile string, every time.Duration, log *slog.Logger) (*CertSource, error) {
	s := &CertSource{certFile: certFile, keyFile: keyFile, every: every, log: log}
	s.stamps = s.stampFiles()
	cert, err := LoadKeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	s.cert, s.checked = cert, time.Now()
	s.logLoaded("TLS certificate loaded")
	return s, nil
}

func (s *CertSource) stampFiles() [2]fileStamp {
	return [2]fileStamp{stampOf(s.certFile), stampOf(s.keyFile)}
}

func (s *CertSource) logLoaded(msg string) {
	if leaf := s.cert.Leaf; leaf != nil {
		s.log.Info(msg, "cert", s.certFile, "subject", leaf.Subject.String(), "dns_names", leaf.DNSNames,
			"not_after", leaf.NotAfter.UTC().Format(time.RFC3339))
		if time.Now().After(leaf.NotAfter) {
			s.log.Warn("TLS certificate has expired: clients will refuse it", "cert", s.certFile, "not_after", leaf.NotAfter.UTC().Format(time.RFC3339))
		}
	}
}

// current returns the certificate to serve, loading the files again first when they changed.
func (s *CertSource) current() *tls.Certificate {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if now.Sub(s.checked) < s.every {
		return s.cert
	}
	s.checked = now
	st := s.stampFiles()
	if st == s.stamps || st == s.badStamps {
		return s.cert
	}
	cert, err := LoadKeyPair(s.certFile, s.keyFile)
	if err != nil {
		s.badStamps = st
		s.log.Warn("TLS certificate files changed but do not load; serving the previous certificate", "err", err)
		return s.cert
	}
	s.cert, s.stamps, s.badStamps = cert, st, [2]fileStamp{}
	s.logLoaded("TLS certificate reloaded")
	return s.cert
}

// ServerConfig is the TLS configuration of every HTTPS port: TLS 1.2 and 1.3 (Go's cipher
// suites, which are all AEAD with forward secrecy for TLS 1.2), ALPN h2 then http/1.1.
func (s *CertSource) ServerConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"h2", "http/1.1"},
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return s.current(), nil
		},
	}
}

// plainConn is the connection under a TLS one (the capped listener's), or c itself.
func plainConn(c net.Conn) net.Conn {
	if tc, ok := c.(*tls.Conn); ok {
		return tc.NetConn()
	}
	return c
}
