package app

import "testing"

// TestHTTPMethodKeepsQuery: taking method= out of an HTTP output's address leaves the rest of
// the query as written, in order: ingest servers that sign or match the query compare bytes.
func TestHTTPMethodKeepsQuery(t *testing.T) {
	for _, c := range []struct{ raw, url, method string }{
		{"https://in.example/up?b=2&a=1&sig=x%2By&flag", "https://in.example/up?b=2&a=1&sig=x%2By&flag", "POST"},
		{"http://h/up?token=a/b:c&method=put&x=1;y=2", "http://h/up?token=a/b:c&x=1;y=2", "PUT"},
		{"http://h/up?method=POST", "http://h/up", "POST"},
		{"http://h/a%2Fb/up.ts", "http://h/a%2Fb/up.ts", "POST"},
	} {
		u, m, err := httpMethod(c.raw)
		if err != nil || u != c.url || m != c.method {
			t.Errorf("httpMethod(%q) = %q, %q, %v; want %q, %q", c.raw, u, m, err, c.url, c.method)
		}
	}
	if _, _, err := httpMethod("http://h/up?method=DELETE"); err == nil {
		t.Error("method=DELETE accepted")
	}
}
