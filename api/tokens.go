package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
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
	UserID    string           `json:"id"`
	IssuedAt  *jwt.NumericDate `json:"iat"`
	ExpiresAt *jwt.NumericDate `json:"exp"`
	JTI       string           `json:"jti"`
}

// GetExpirationTime implements jwt.Claims.
func (c *tokenClaims) GetExpirationTime() (*jwt.NumericDate, error) { return c.ExpiresAt, nil }

// GetIssuedAt implements jwt.Claims.
func (c *tokenClaims) GetIssuedAt() (*jwt.NumericDate, error) { return c.IssuedAt, nil }

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
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
		JTI:       hex.EncodeToString(jti),
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(key)
}

// parseToken checks signature (HS256 only), expiry and the presence of id and jti.
func parseToken(key []byte, raw string, now func() time.Time) (*tokenClaims, error) {
	c := &tokenClaims{}
	p := jwt.NewParser(jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithLeeway(30*time.Second), jwt.WithTimeFunc(now))
	if _, err := p.ParseWithClaims(raw, c, func(*jwt.Token) (any, error) { return key, nil }); err != nil {
		return nil, err
	}
	if c.UserID == "" || c.JTI == "" {
		return nil, errors.New("token lacks id or jti")
	}
	return c, nil
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
	return signToken(key, u.ID, time.Now(), ttl)
}
