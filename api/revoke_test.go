package api

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

func login(t *testing.T, e *env, password string) result {
	t.Helper()
	return e.post("/api/auth/login", map[string]any{"email": "admin", "password": password}, noToken)
}

// TestLogoutAllRevokesEveryEarlierToken: logoutAll refuses every token of the user issued until
// then, the caller's own included; a login right after (the same instant on the test clock)
// gets a token that works.
func TestLogoutAllRevokesEveryEarlierToken(t *testing.T) {
	e := newEnv(t)
	first := e.token
	second := login(t, e, adminPassword).obj()["token"].(string)
	issued, err := IssueToken(context.Background(), e.store, AdminUser, time.Hour) // as `sluice token` does
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, e.post("/api/auth/logoutAll", nil, noToken), http.StatusUnauthorized, CodeUnauthorized, "")
	wantSuccess(t, e.post("/api/auth/logoutAll", nil, withHeader("x-access-token", second)))
	for name, tok := range map[string]string{"caller": second, "other": first, "sluice token": issued} {
		res := e.post("/api/vod/getAll", nil, withHeader("x-access-token", tok))
		wantErr(t, res, http.StatusUnauthorized, CodeUnauthorized, "")
		if name == "caller" && !strings.Contains(string(res.raw), "logoutAll") {
			t.Fatalf("message does not say why: %s", res.raw)
		}
	}
	res := login(t, e, adminPassword)
	if res.code != http.StatusOK {
		t.Fatalf("login after logoutAll: %d %s", res.code, res.raw)
	}
	fresh := res.obj()["token"].(string)
	if res := e.post("/api/vod/getAll", nil, withHeader("x-access-token", fresh)); res.code != http.StatusOK {
		t.Fatalf("token issued after logoutAll refused: %d %s", res.code, res.raw)
	}
	if c := mustClaims(t, e, fresh); !c.IssuedAt.After(e.clock()) {
		t.Fatalf("iat %v is not after the revocation at %v", c.IssuedAt.Time, e.clock())
	}
	// Days later the old tokens are still refused; the new one works until it expires.
	e.advance(48 * time.Hour)
	wantErr(t, e.post("/api/vod/getAll", nil, withHeader("x-access-token", first)), http.StatusUnauthorized, CodeUnauthorized, "")
	if res := e.post("/api/vod/getAll", nil, withHeader("x-access-token", fresh)); res.code != http.StatusOK {
		t.Fatalf("fresh token: %d", res.code)
	}
}

// TestSetPasswordRevokesTokens: `sluice passwd` (SetPassword) refuses every token issued
// before it; the new password logs in and its token works.
func TestSetPasswordRevokesTokens(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Now = time.Now })
	old := e.token
	if res := e.post("/api/vod/getAll", nil); res.code != http.StatusOK {
		t.Fatal(res.code)
	}
	if err := SetPassword(context.Background(), e.store, AdminUser, "a new password"); err != nil {
		t.Fatal(err)
	}
	wantErr(t, e.post("/api/vod/getAll", nil, withHeader("x-access-token", old)), http.StatusUnauthorized, CodeUnauthorized, "")
	wantErr(t, login(t, e, adminPassword), http.StatusUnauthorized, CodeUnauthorized, "")
	res := login(t, e, "a new password")
	if res.code != http.StatusOK {
		t.Fatalf("new password: %d %s", res.code, res.raw)
	}
	if r := e.post("/api/vod/getAll", nil, withHeader("x-access-token", res.obj()["token"].(string))); r.code != http.StatusOK {
		t.Fatalf("token after passwd refused: %d %s", r.code, r.raw)
	}
}

// TestTokenDatesKeepMilliseconds: iat and exp carry milliseconds, and whole seconds (tokens
// of earlier versions) still parse.
func TestTokenDatesKeepMilliseconds(t *testing.T) {
	e := newEnv(t)
	c := mustClaims(t, e, e.token)
	if want := e.clock().Truncate(time.Millisecond); !c.IssuedAt.Equal(want) {
		t.Fatalf("iat %v, want %v", c.IssuedAt.Time, want)
	}
	var d msDate
	for in, want := range map[string]int64{`1732197723`: 1732197723000, `1732197723.5`: 1732197723500, `1732197723.1239`: 1732197723124, `1.7e9`: 1700000000000} {
		if err := d.UnmarshalJSON([]byte(in)); err != nil || d.UnixMilli() != want {
			t.Errorf("%s: %v %v", in, d.UnixMilli(), err)
		}
	}
	for _, bad := range []string{`"x"`, `1e300`, `-1e300`, `null1`} {
		if err := d.UnmarshalJSON([]byte(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	if b, _ := (msDate{time.UnixMilli(1732197723045)}).MarshalJSON(); string(b) != "1732197723.045" {
		t.Fatalf("marshal %s", b)
	}
}
