package api

import (
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// PasswordIterations is the PBKDF2 work factor of new hashes (OWASP 2023 for PBKDF2-HMAC-SHA256).
// Hashes carry their own count, so raising it later keeps old hashes valid; tests lower it to
// run fast.
var PasswordIterations = 600_000

const (
	hashPrefix    = "pbkdf2-sha256"
	saltBytes     = 16
	keyBytes      = 32
	maxIterations = 10_000_000
	// maxPassword bounds the work one login may cause.
	maxPassword = 1024
)

// HashPassword hashes password with PBKDF2-SHA256 and a random salt, as
// "pbkdf2-sha256$<iterations>$<salt base64>$<hash base64>".
func HashPassword(password string) (string, error) {
	return hashPassword(password, PasswordIterations)
}

// hashPassword is HashPassword with a given work factor.
func hashPassword(password string, iterations int) (string, error) {
	if password == "" {
		return "", errors.New("password must not be empty")
	}
	if len(password) > maxPassword {
		return "", fmt.Errorf("password must be at most %d bytes", maxPassword)
	}
	salt := make([]byte, saltBytes)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key, err := pbkdf2.Key(sha256.New, password, salt, iterations, keyBytes)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	enc := base64.RawStdEncoding
	return fmt.Sprintf("%s$%d$%s$%s", hashPrefix, iterations, enc.EncodeToString(salt), enc.EncodeToString(key)), nil
}

// CheckPassword reports whether password matches a hash made by HashPassword, comparing in
// constant time. A malformed hash matches nothing.
func CheckPassword(hash, password string) bool {
	parts := strings.Split(hash, "$")
	if len(parts) != 4 || parts[0] != hashPrefix || len(password) > maxPassword {
		return false
	}
	iter, err := strconv.Atoi(parts[1])
	if err != nil || iter < 1 || iter > maxIterations {
		return false
	}
	enc := base64.RawStdEncoding
	salt, err1 := enc.DecodeString(parts[2])
	want, err2 := enc.DecodeString(parts[3])
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false
	}
	got, err := pbkdf2.Key(sha256.New, password, salt, iter, len(want))
	if err != nil {
		return false
	}
	return subtle.ConstantTimeCompare(got, want) == 1
}

const passwordAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"

// randomPassword returns n characters drawn uniformly from passwordAlphabet.
func randomPassword(n int) (string, error) {
	out := make([]byte, 0, n)
	buf := make([]byte, 64)
	limit := 256 - 256%len(passwordAlphabet)
	for len(out) < n {
		if _, err := rand.Read(buf); err != nil {
			return "", err
		}
		for _, b := range buf {
			if int(b) < limit && len(out) < n {
				out = append(out, passwordAlphabet[int(b)%len(passwordAlphabet)])
			}
		}
	}
	return string(out), nil
}
