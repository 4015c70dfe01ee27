package rtmp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
)

// startTLSProxy ends TLS in front of the plain RTMP server at addr, as a CDN's rtmps ingest
// does, and makes this package's client trust its certificate.
func startTLSProxy(t *testing.T, addr string) string {
	t.Helper()
	hs := httptest.NewTLSServer(nil) // for its certificate, for 127.0.0.1
	cert, roots := hs.TLS.Certificates, x509.NewCertPool()
	roots.AddCert(hs.Certificate())
	hs.Close()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: cert})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				b, err := net.Dial("tcp", addr)
				if err != nil {
					return
				}
				defer b.Close()
				go func() { _, _ = io.Copy(b, c); b.Close() }()
				_, _ = io.Copy(c, b)
			})
		}
	})
	old := tlsConfig
	tlsConfig = &tls.Config{RootCAs: roots}
	t.Cleanup(func() { tlsConfig = old })
	return ln.Addr().String()
}

// TestPushPullRTMPS: rtmps:// addresses (Facebook's and YouTube's ingest) publish and play
// over TLS, with the certificate checked against the host name.
func TestPushPullRTMPS(t *testing.T) {
	reg := stream.NewRegistry(stream.Options{Log: testLog(t)})
	addr := startServer(t, &Server{Registry: reg})
	secure := startTLSProxy(t, addr)

	src, r, closeStream := readStream(t, "src", "push")
	defer closeStream()
	publishTS(t, src, encodeArgs(20, "500k")...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pushed := make(chan error, 1)
	go func() {
		pushed <- Push(ctx, r, src.Tracks(), PushOptions{URL: "rtmps://" + secure + "/live?token=t1", Key: "tls"})
	}()
	waitPublished(t, reg, "tls", 30*time.Second)

	if _, units := pullBackAndStop(t, "rtmps://"+secure+"/live/tls", 30, cancel, pushed); !units[0].Key {
		t.Fatal("pulled stream does not start with a key frame")
	}
}
