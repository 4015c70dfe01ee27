package testutil

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// DialSource connects over TCP to addr from the loopback source address src (any of
// 127.0.0.0/8 works on Linux), as a client on another address would, within 10 s. It is
// DialFrom for goroutines, which must not fail the test.
func DialSource(src, addr string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 10 * time.Second}
	return d.Dial("tcp", addr)
}

// DialFrom connects over TCP to addr from the loopback source address src, as DialSource; the
// connection is closed when the test ends.
func DialFrom(t testing.TB, src, addr string) net.Conn {
	t.Helper()
	c, err := DialSource(src, addr)
	if err != nil {
		t.Fatalf("dial %s from %s: %v", addr, src, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// KeepAlive is a client connection that sends requests one by one and reads their answers.
type KeepAlive struct {
	Conn net.Conn
	// Reader reads Conn's answers.
	Reader *bufio.Reader
}

// DialKeepAlive connects to addr from the loopback address src; the connection closes when
// the test ends.
func DialKeepAlive(t *testing.T, src, addr string) *KeepAlive {
	t.Helper()
	c := DialFrom(t, src, addr)
	return &KeepAlive{Conn: c, Reader: bufio.NewReader(c)}
}

// Get sends GET path and returns the status, or an error when the connection was closed
// without an answer.
func (k *KeepAlive) Get(path string) (int, error) {
	_ = k.Conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := fmt.Fprintf(k.Conn, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(k.Reader, nil)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// ClosedNow says whether the server closed k (reads EOF or a reset at once); it fails the
// test when the connection is still open after a while.
func (k *KeepAlive) ClosedNow(t *testing.T) bool {
	t.Helper()
	_ = k.Conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := k.Reader.ReadByte()
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return false
	}
	return err != nil
}
