package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/sluicemedia/sluice/storage"
)

// DefaultTokenTTL is the lifetime of issued tokens unless configured (API.md: 30 days).
const DefaultTokenTTL = 30 * 24 * time.Hour

// secretSetting is the store setting that holds the token signing secret (hex of 32 bytes).
const secretSetting = "jwt_secret"

// tokenClaims are the claims of an API token: id (user ObjectId), iat, exp and jti.
type tokenClaims struct {
	UserID    string  `json:"id"`
	IssuedAt  *msDate `json:"iat"`
	ExpiresAt *msDate `json:"exp"`
	JTI       string  `json:"jti"`
}

// msDate is a JWT NumericDate with millisecond precision (RFC 7519 allows non-integer seconds),
// so that a revocation can tell the tokens issued before it from those issued after.
type msDate struct{ time.Time }

func newMSDate(t time.Time) *msDate { return &msDate{t.Truncate(time.Millisecond)} }

// MarshalJSON writes seconds since the epoch with three decimals.
func (d msDate) MarshalJSON() ([]byte, error) {
	ms := d.UnixMilli()
	return fmt.Appendf(nil, "%d.%03d", ms/1000, ms%1000), nil
}

// UnmarshalJSON reads seconds since the epoch, whole or not, to the millisecond.
func (d *msDate) UnmarshalJSON(b []byte) error {
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("token date %s: %w", b, err)
	}
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || math.Abs(f) > maxTokenSeconds {
		return fmt.Errorf("token date %s is not a date", b)
	}
	d.Time = time.UnixMilli(int64(math.Round(f * 1000))).UTC()
	return nil
}

// maxTokenSeconds bounds the dates a token may carry (2^37 s: year 6325), far inside time.Time's range.
const maxTokenSeconds = 1 << 37

func (d *msDate) numeric() *jwt.NumericDate {
	if d == nil {
		return nil
	}
	return &jwt.NumericDate{Time: d.Time}
}

// GetExpirationTime implements jwt.Claims.
func (c *tokenClaims) GetExpirationTime() (*jwt.NumericDate, error) {
	return c.ExpiresAt.numeric(), nil
}

// GetIssuedAt implements jwt.Claims.
func (c *tokenClaims) GetIssuedAt() (*jwt.NumericDate, error) { return c.IssuedAt.numeric(), nil }

// GetNotBefore implements jwt.Claims; tokens carry no nbf.
func (c *tokenClaims) GetNotBefore() (*jwt.NumericDate, error) { return nil, nil }

// GetIssuer implements jwt.Claims; tokens carry no iss.
func (c *tokenClaims) GetIssuer() (string, error) { return "", nil }

// GetSubject implements jwt.Claims; the user is in the id claim.
func (c *tokenClaims) GetSubject() (string, error) { return "", nil }

// GetAudience implements jwt.Claims; tokens carry no aud.
func (c *tokenClaims) GetAudience() (jwt.ClaimStrings, error) { return nil, nil }

// loadSecret returns the signing secret, creating it on first use.
func loadSecret(ctx context.Context, store Store) ([]byte, error) {
	v, err := store.SettingOrInit(ctx, secretSetting, func() (string, error) {
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return "", err
		}
		return hex.EncodeToString(b), nil
	})
	if err != nil {
		return nil, fmt.Errorf("token secret: %w", err)
	}
	key, err := hex.DecodeString(v)
	if err != nil || len(key) < 32 {
		return nil, errors.New("token secret: stored value is not 32 bytes of hex")
	}
	return key, nil
}

// signToken makes an HS256 token for userID valid for ttl from now.
func signToken(key []byte, userID string, now time.Time, ttl time.Duration) (string, error) {
	jti := make([]byte, 16)
	if _, err := rand.Read(jti); err != nil {
		return "", err
	}
	c := &tokenClaims{
		UserID:    userID,
		IssuedAt:  newMSDate(now),
		ExpiresAt: newMSDate(now.Add(ttl)),
		JTI:       hex.EncodeToString(jti),
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(key)
}

// parseToken checks signature (HS256 only), expiry and the presence of id and jti.
func parseToken(key []byte, raw string, now func() time.Time) (*tokenClaims, error) {
	c := &tokenClaims{}
	p := jwt.NewParser(jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithLeeway(tokenLeeway), jwt.WithTimeFunc(now))
	if _, err := p.ParseWithClaims(raw, c, func(*jwt.Token) (any, error) { return key, nil }); err != nil {
		return nil, err
	}
	if c.UserID == "" || c.JTI == "" || c.IssuedAt == nil {
		return nil, errors.New("token lacks id, jti or iat")
	}
	return c, nil
}

// revokeTokens refuses every token of the user issued until now, and returns the user's "not
// before" as stored (now, or a later one: a clock set back must not revive tokens).
func revokeTokens(ctx context.Context, store Store, userID string, now time.Time) (time.Time, error) {
	at, err := store.RevokeUserTokens(ctx, userID, now)
	if err != nil {
		return time.Time{}, fmt.Errorf("revoke tokens of user %s: %w", userID, err)
	}
	return at, nil
}

// issueAfterRevocation signs a token for userID issued at now, or just after the user's last
// revocation when that is not earlier (the same millisecond, or a clock set back), so that a
// token issued after a revocation is never refused by it.
func issueAfterRevocation(ctx context.Context, store Store, key []byte, userID string, now time.Time, ttl time.Duration) (string, error) {
	nbf, err := store.TokensNotBefore(ctx, userID)
	if err != nil {
		return "", fmt.Errorf("token not-before of user %s: %w", userID, err)
	}
	if floor := nbf.Add(time.Millisecond); now.Before(floor) {
		now = floor
	}
	return signToken(key, userID, now, ttl)
}

// issue signs a token for userID for the API's logins.
func (s *server) issue(ctx context.Context, userID string, now time.Time) (string, error) {
	return issueAfterRevocation(ctx, s.store, s.secret, userID, now, s.ttl)
}

// IssueToken returns a fresh token for username, for `sluice token`. A ttl of 0 means
// DefaultTokenTTL.
func IssueToken(ctx context.Context, store Store, username string, ttl time.Duration) (string, error) {
	if ttl <= 0 {
		ttl = DefaultTokenTTL
	}
	u, err := store.UserByName(ctx, username)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return "", fmt.Errorf("issue token: no user %q", username)
		}
		return "", fmt.Errorf("issue token: %w", err)
	}
	key, err := loadSecret(ctx, store)
	if err != nil {
		return "", err
	}
	return issueAfterRevocation(ctx, store, key, u.ID, time.Now(), ttl)
}
