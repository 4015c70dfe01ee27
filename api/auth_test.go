package api

import (
	"context"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/sluicemedia/sluice/storage"
)

func (e *env) secret() []byte {
	k, err := hex.DecodeString(e.store.settings[secretSetting])
	if err != nil {
		e.t.Fatal(err)
	}
	return k
}

func (e *env) adminID() string {
	u, err := e.store.UserByName(context.Background(), AdminUser)
	if err != nil {
		e.t.Fatal(err)
	}
	return u.ID
}

func TestTokensRefused(t *testing.T) {
	e := newEnv(t)
	now := e.clock()
	claims := jwt.MapClaims{"id": e.adminID(), "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "jti": "abc"}
	none, err := jwt.NewWithClaims(jwt.SigningMethodNone, claims).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	hs512, _ := jwt.NewWithClaims(jwt.SigningMethodHS512, claims).SignedString(e.secret())
	otherKey, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(strings.Repeat("k", 32)))
	expired, _ := signToken(e.secret(), e.adminID(), now.Add(-2*time.Hour), time.Hour)
	unknownUser, _ := signToken(e.secret(), storage.NewID(), now, time.Hour)
	noJTI, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"id": e.adminID(), "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}).SignedString(e.secret())
	noExp, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"id": e.adminID(), "iat": now.Unix(), "jti": "x"}).SignedString(e.secret())
	valid, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(e.secret())

	for name, tok := range map[string]string{"none": none, "hs512": hs512, "other key": otherKey, "expired": expired,
		"unknown user": unknownUser, "no jti": noJTI, "no exp": noExp, "garbage": "x.y.z", "tampered": valid[:len(valid)-2] + "xx"} {
		t.Run(name, func(t *testing.T) {
			wantErr(t, e.post("/api/vod/getAll", nil, withHeader("x-access-token", tok)), http.StatusUnauthorized, CodeUnauthorized, "")
			wantErr(t, e.post("/api/vod/getAll", nil, noToken, withHeader("Authorization", "Bearer "+tok)), http.StatusUnauthorized, CodeUnauthorized, "")
		})
	}
	if res := e.post("/api/vod/getAll", nil, withHeader("x-access-token", valid)); res.code != http.StatusOK {
		t.Fatalf("hand-made valid token refused: %d %s", res.code, res.raw)
	}
	if res := e.post("/api/vod/getAll", nil, noToken, withHeader("Authorization", "bearer "+e.token)); res.code != http.StatusOK {
		t.Fatalf("Authorization: Bearer refused: %d %s", res.code, res.raw)
	}
}

func TestTokenExpiresWithClock(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.TokenTTL = time.Hour })
	if res := e.post("/api/vod/getAll", nil); res.code != http.StatusOK {
		t.Fatal(res.code)
	}
	e.advance(time.Hour + time.Minute)
	wantErr(t, e.post("/api/vod/getAll", nil), http.StatusUnauthorized, CodeUnauthorized, "")
}

func TestDefaultTokenLifetime(t *testing.T) {
	e := newEnv(t)
	c, err := parseToken(e.secret(), e.token, e.clock)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.ExpiresAt.Sub(c.IssuedAt.Time); got != DefaultTokenTTL || c.UserID != e.adminID() || len(c.JTI) < 16 {
		t.Fatalf("claims %+v (lifetime %v)", c, got)
	}
}

func TestLoginGetTokenLogout(t *testing.T) {
	e := newEnv(t)
	res := e.post("/api/auth/login", map[string]any{"username": "ADMIN", "password": adminPassword}, noToken)
	if res.code != http.StatusOK || res.obj()["success"] != true {
		t.Fatalf("username alias: %d %s", res.code, res.raw)
	}
	tok := res.obj()["token"].(string)
	res = e.post("/api/auth/getToken", nil, withHeader("x-access-token", tok))
	if res.code != http.StatusOK || res.obj()["token"] != tok {
		t.Fatalf("getToken %d %s", res.code, res.raw)
	}
	wantSuccess(t, e.post("/api/auth/logout", nil, withHeader("x-access-token", tok)))
	wantErr(t, e.post("/api/auth/getToken", nil, withHeader("x-access-token", tok)), http.StatusUnauthorized, CodeUnauthorized, "")
	// Other tokens still work.
	if res := e.post("/api/vod/getAll", nil); res.code != http.StatusOK {
		t.Fatalf("logout revoked another token: %d", res.code)
	}
	if exp, ok := e.store.revoked[mustClaims(t, e, tok).JTI]; !ok || exp.IsZero() {
		t.Fatal("logout did not revoke until exp")
	}
}

func mustClaims(t *testing.T, e *env, tok string) *tokenClaims {
	t.Helper()
	c, err := parseToken(e.secret(), tok, e.clock)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestLoginFailuresAndRateLimit(t *testing.T) {
	e := newEnv(t) // 3 failures a minute
	wantErr(t, e.post("/api/auth/login", map[string]any{"email": "admin"}, noToken), http.StatusBadRequest, CodeValidation, "password")
	wantErr(t, e.post("/api/auth/login", map[string]any{"password": "x"}, noToken), http.StatusBadRequest, CodeValidation, "email")
	wantErr(t, e.post("/api/auth/login", "{", noToken), http.StatusBadRequest, CodeBadJSON, "")
	wantErr(t, e.post("/api/auth/login", map[string]any{"email": "admin", "password": "wrong"}, noToken), http.StatusUnauthorized, CodeUnauthorized, "")
	wantErr(t, e.post("/api/auth/login", map[string]any{"email": "nobody", "password": "wrong"}, noToken), http.StatusUnauthorized, CodeUnauthorized, "")
	e.advance(10 * time.Second)
	wantErr(t, e.post("/api/auth/login", map[string]any{"email": "admin", "password": ""}, noToken), http.StatusUnauthorized, CodeUnauthorized, "")
	res := e.post("/api/auth/login", map[string]any{"email": "admin", "password": adminPassword}, noToken)
	wantErr(t, res, http.StatusTooManyRequests, CodeRateLimited, "")
	if ra, err := strconv.Atoi(res.header.Get("Retry-After")); err != nil || ra < 1 || ra > 60 {
		t.Fatalf("Retry-After %q", res.header.Get("Retry-After"))
	}
	// Another address is not limited.
	res = e.post("/api/auth/login", map[string]any{"email": "admin", "password": adminPassword}, noToken, func(r *http.Request) { r.RemoteAddr = "10.9.9.9:1234" })
	if res.code != http.StatusOK {
		t.Fatalf("other address: %d %s", res.code, res.raw)
	}
	// The window slides: once the oldest failure ages out, the address may try again.
	e.advance(51 * time.Second)
	if res := e.post("/api/auth/login", map[string]any{"email": "admin", "password": adminPassword}, noToken); res.code != http.StatusOK {
		t.Fatalf("after window: %d %s", res.code, res.raw)
	}
}

func TestPasswordHashing(t *testing.T) {
	h, err := HashPassword("pässword")
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(h, "$")
	if len(parts) != 4 || parts[0] != "pbkdf2-sha256" || parts[1] != strconv.Itoa(PasswordIterations) {
		t.Fatalf("hash %q", h)
	}
	h2, _ := HashPassword("pässword")
	if h == h2 {
		t.Fatal("salt is not random")
	}
	if !CheckPassword(h, "pässword") || CheckPassword(h, "password") || CheckPassword(h, "") {
		t.Fatal("CheckPassword")
	}
	for _, bad := range []string{"", "x", "pbkdf2-sha256$0$AA$AA", "pbkdf2-sha256$99999999999$AA$AA", "pbkdf2-sha256$10$!!$AA", "md5$1$a$b",
		strings.Replace(h, "pbkdf2-sha256", "pbkdf2-sha512", 1)} {
		if CheckPassword(bad, "pässword") {
			t.Fatalf("malformed hash %q matched", bad)
		}
	}
	if _, err := HashPassword(""); err == nil {
		t.Fatal("empty password hashed")
	}
}

func TestBootstrapIssueTokenSetPassword(t *testing.T) {
	ctx := context.Background()
	st := newFakeStore()
	pw, err := Bootstrap(ctx, st, "")
	if err != nil || len(pw) != 20 {
		t.Fatalf("generated %q %v", pw, err)
	}
	secret := st.settings[secretSetting]
	if k, err := hex.DecodeString(secret); err != nil || len(k) != 32 {
		t.Fatalf("secret %q", secret)
	}
	if again, err := Bootstrap(ctx, st, "other"); again != "" || err != nil || st.settings[secretSetting] != secret {
		t.Fatalf("second start changed something: %q %v", again, err)
	}
	u, _ := st.UserByName(ctx, AdminUser)
	if !CheckPassword(u.PasswordHash, pw) {
		t.Fatal("generated password does not log in")
	}
	if err := SetPassword(ctx, st, "admin", "new password"); err != nil {
		t.Fatal(err)
	}
	if err := SetPassword(ctx, st, "ghost", "x"); err == nil {
		t.Fatal("set password of unknown user")
	}
	if err := SetPassword(ctx, st, "admin", ""); err == nil {
		t.Fatal("empty password accepted")
	}

	h, err := New(Config{Store: st, Procs: newFakeProcs()})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, h: h, store: st}
	if res := e.post("/api/auth/login", map[string]any{"email": "admin", "password": "new password"}, noToken); res.code != http.StatusOK {
		t.Fatalf("login with new password: %d %s", res.code, res.raw)
	}
	tok, err := IssueToken(ctx, st, "admin", 0)
	if err != nil {
		t.Fatal(err)
	}
	e.token = tok
	if res := e.post("/api/vod/getAll", nil); res.code != http.StatusOK {
		t.Fatalf("issued token refused: %d %s", res.code, res.raw)
	}
	if _, err := IssueToken(ctx, st, "ghost", time.Hour); err == nil {
		t.Fatal("token for unknown user")
	}
	// A given admin password is used as is.
	st2 := newFakeStore()
	if pw, err := Bootstrap(ctx, st2, "given password"); pw != "" || err != nil {
		t.Fatalf("%q %v", pw, err)
	}
	u2, _ := st2.UserByName(ctx, AdminUser)
	if !CheckPassword(u2.PasswordHash, "given password") {
		t.Fatal("given password not set")
	}
}
