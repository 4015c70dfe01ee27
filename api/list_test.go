package api

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

func names(t *testing.T, r result, key string) []string {
	t.Helper()
	if r.code != http.StatusOK {
		t.Fatalf("%d %s", r.code, r.raw)
	}
	var out []string
	for _, v := range r.arr() {
		out = append(out, v.(map[string]any)[key].(string))
	}
	return out
}

func TestGetAllQuery(t *testing.T) {
	e := newEnv(t)
	for i, n := range []string{"c", "a", "d", "b"} {
		body := playerBody(n, 8000+100*i)
		if n == "d" || n == "a" {
			body["active"] = false
		}
		e.mustCreate("vod", body)
		e.advance(time.Second)
	}
	cases := []struct {
		body any
		want []string
	}{
		{nil, []string{"c", "a", "d", "b"}}, // oldest first
		{map[string]any{"limit": 2}, []string{"c", "a"}},
		{map[string]any{"limit": "2", "skip": "1"}, []string{"a", "d"}},
		{map[string]any{"skip": 10}, nil},
		{map[string]any{"sort": map[string]any{"vod_name": 1}}, []string{"a", "b", "c", "d"}},
		{map[string]any{"sort": map[string]any{"vod_port": -1}}, []string{"b", "d", "a", "c"}},
		{map[string]any{"sort": map[string]any{"created": -1}, "limit": 1}, []string{"b"}},
		{`{"sort":{"active":-1,"vod_name":-1}}`, []string{"c", "b", "d", "a"}},
		{`{"sort":{"vod_name":-1,"active":-1}}`, []string{"d", "c", "b", "a"}},
		{map[string]any{"filter": map[string]any{"active": false}}, []string{"a", "d"}},
		{map[string]any{"filter": map[string]any{"vod_port": "8200"}}, []string{"d"}},
		{map[string]any{"filter": map[string]any{"vod_name": "b", "active": true}}, []string{"b"}},
		{map[string]any{"filter": map[string]any{"nope": 1}}, nil},
		{map[string]any{"filter": map[string]any{"active": true}, "sort": map[string]any{"vod_name": 1}}, []string{"b", "c"}},
	}
	for _, c := range cases {
		got := names(t, e.post("/api/vod/getAll", c.body), "vod_name")
		if len(got) != len(c.want) {
			t.Errorf("%v: %v, want %v", c.body, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%v: %v, want %v", c.body, got, c.want)
				break
			}
		}
	}
	count := e.post("/api/vod/getCount", map[string]any{"filter": map[string]any{"active": false}, "limit": 1})
	if count.code != http.StatusOK || count.obj()["count"] != 2.0 {
		t.Fatalf("getCount %d %s", count.code, count.raw)
	}

	bad := []struct {
		body  any
		field string
	}{
		{map[string]any{"limit": 0}, "limit"},
		{map[string]any{"limit": 1001}, "limit"},
		{map[string]any{"limit": 1.5}, "limit"},
		{map[string]any{"skip": -1}, "skip"},
		{map[string]any{"sort": map[string]any{"vod_name": 2}}, "sort.vod_name"},
		{map[string]any{"sort": map[string]any{"vod_name": "asc"}}, "sort.vod_name"},
		{map[string]any{"sort": map[string]any{"vod_name": 0}}, "sort.vod_name"},
		{map[string]any{"sort": "vod_name"}, "sort"},
		{map[string]any{"filter": []any{1}}, "filter"},
		{map[string]any{"sort": manyKeys(maxListKeys + 1)}, "sort"},
		{map[string]any{"filter": manyKeys(maxListKeys + 1)}, "filter"},
	}
	for _, c := range bad {
		wantErr(t, e.post("/api/vod/getAll", c.body), http.StatusBadRequest, CodeValidation, c.field)
		wantErr(t, e.post("/api/ports/getAll", c.body), http.StatusBadRequest, CodeValidation, c.field)
	}
}

// manyKeys is an object of n keys k0, k1, ..., each 1.
func manyKeys(n int) map[string]any {
	m := make(map[string]any, n)
	for i := range n {
		m["k"+strconv.Itoa(i)] = 1
	}
	return m
}

// TestListQueryManySortKeys sends getAll a body of 1 MiB naming some 100 000 sort keys: it is
// refused at once (reading their order searched the keys so far for each key, and took a core
// for 17 s; then the store refused a query of so many terms with a 500), while as many keys as
// allowed are served.
func TestListQueryManySortKeys(t *testing.T) {
	e := newEnv(t)
	var b strings.Builder
	b.WriteString(`{"sort":{`)
	for i := 0; b.Len() < maxBody-32; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":1`)
	}
	b.WriteString(`}}`)
	start := time.Now()
	res := e.post("/api/vod/getAll", b.String())
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("getAll with %d bytes of sort keys took %v", b.Len(), took)
	}
	wantErr(t, res, http.StatusBadRequest, CodeValidation, "sort")
	if want := "sort must have at most " + strconv.Itoa(maxListKeys) + " keys"; !strings.Contains(string(res.raw), want) {
		t.Errorf("answer %s; want it to say %q", res.raw, want)
	}
	for _, key := range []string{"sort", "filter"} {
		if res := e.post("/api/vod/getAll", map[string]any{key: manyKeys(maxListKeys)}); res.code != http.StatusOK {
			t.Fatalf("%d %s keys: %d %s", maxListKeys, key, res.code, res.raw)
		}
	}
}
