package segment_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/sluicemedia/sluice/packager/segment"
)

func TestConcat(t *testing.T) {
	parts := [][]byte{[]byte("head"), nil, []byte("er+"), []byte("body bytes")}
	want := []byte("header+body bytes")
	r := segment.Concat(parts...)
	got, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%q %v", got, err)
	}
	for off := range len(want) {
		for n := 1; off+n <= len(want); n++ {
			if _, err := r.Seek(int64(off), io.SeekStart); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, n)
			if _, err := io.ReadFull(r, buf); err != nil || !bytes.Equal(buf, want[off:off+n]) {
				t.Fatalf("at %d+%d: %q %v", off, n, buf, err)
			}
		}
	}
}

func TestErrorsAndPreflight(t *testing.T) {
	rec := httptest.NewRecorder()
	segment.WarmingUp(rec, "abc", 1, 3)
	var body struct {
		Success bool
		Error   struct{ Code, Message string }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusNotFound {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if body.Success || body.Error.Code != "NOT_FOUND" || body.Error.Message != "player abc is warming up: 1 of 3 segments ready" {
		t.Errorf("%+v", body)
	}
	for method, want := range map[string]int{http.MethodOptions: http.StatusNoContent, http.MethodPut: http.StatusMethodNotAllowed} {
		rec := httptest.NewRecorder()
		if !segment.Preflight(rec, httptest.NewRequest(method, "/x", nil)) || rec.Code != want {
			t.Errorf("%s: %d", method, rec.Code)
		}
		if rec.Header().Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s: no CORS", method)
		}
	}
	if segment.Preflight(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/x", nil)) {
		t.Error("GET taken as preflight")
	}
}
