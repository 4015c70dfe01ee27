package api

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestSpeedtestPeerEndpoints(t *testing.T) {
	e := newEnv(t)
	res := e.do(http.MethodGet, "/api/utils/speedtest/ping", nil, noToken)
	if res.code != http.StatusOK || res.obj()["pong"] != true {
		t.Fatalf("ping: %d %s", res.code, res.raw)
	}

	res = e.do(http.MethodGet, "/api/utils/speedtest/download?bytes=200000", nil, noToken)
	if res.code != http.StatusOK || len(res.raw) != 200000 {
		t.Fatalf("download: status %d, %d bytes, want 200000", res.code, len(res.raw))
	}
	if bytes.Count(res.raw, []byte{0}) > 200000/64 {
		t.Fatalf("download bytes look constant, not random")
	}
	res = e.do(http.MethodGet, "/api/utils/speedtest/download", nil, noToken)
	if res.code != http.StatusOK || len(res.raw) != speedtestDefaultBytes {
		t.Fatalf("default download: %d, %d bytes", res.code, len(res.raw))
	}
	for _, q := range []string{"0", "-5", "abc", "999999999999"} {
		res = e.do(http.MethodGet, "/api/utils/speedtest/download?bytes="+q, nil, noToken)
		wantErr(t, res, http.StatusBadRequest, CodeValidation, "bytes")
	}

	res = e.do(http.MethodPost, "/api/utils/speedtest/upload", strings.Repeat("x", 3<<20), noToken)
	if res.code != http.StatusOK || res.obj()["bytes"] != float64(3<<20) {
		t.Fatalf("upload: %d %s", res.code, res.raw)
	}
}

// TestSpeedtestPeerTransfersAtOnce: the public peer runs at most maxSpeedtestTransfers
// downloads and uploads at once; one more is refused at once with Retry-After, and served again
// once one ends. Ping is not counted.
func TestSpeedtestPeerTransfersAtOnce(t *testing.T) {
	e := newEnv(t)
	codes := make(chan int, maxSpeedtestTransfers)
	var bodies []*io.PipeWriter
	defer func() {
		for _, w := range bodies {
			w.Close()
		}
	}()
	for range maxSpeedtestTransfers {
		pr, pw := io.Pipe()
		bodies = append(bodies, pw)
		go func() {
			rec := httptest.NewRecorder()
			e.h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/api/utils/speedtest/upload", pr))
			codes <- rec.Code
		}()
		// The write returns once the handler reads, so the upload is under way.
		if _, err := pw.Write([]byte("speed")); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ method, path, body string }{
		{http.MethodGet, "/api/utils/speedtest/download?bytes=10", ""},
		{http.MethodPost, "/api/utils/speedtest/upload", "x"},
	} {
		res := e.do(c.method, c.path, c.body, noToken)
		wantErr(t, res, http.StatusServiceUnavailable, CodeUnavailable, "")
		if got := res.header.Get("Retry-After"); got != "10" {
			t.Fatalf("%s past %d transfers: Retry-After %q, want 10", c.path, maxSpeedtestTransfers, got)
		}
	}
	if res := e.do(http.MethodGet, "/api/utils/speedtest/ping", nil, noToken); res.code != http.StatusOK {
		t.Fatalf("ping while the transfers run: %d %s", res.code, res.raw)
	}
	bodies[0].Close()
	if code := <-codes; code != http.StatusOK {
		t.Fatalf("an upload that ended: %d", code)
	}
	if res := e.do(http.MethodGet, "/api/utils/speedtest/download?bytes=10", nil, noToken); res.code != http.StatusOK || len(res.raw) != 10 {
		t.Fatalf("a download once one ended: %d, %d bytes", res.code, len(res.raw))
	}
}
