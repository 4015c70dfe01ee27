package api

import (
	"bytes"
	"net/http"
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
