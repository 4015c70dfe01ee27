// Package webhooks delivers events to the webhooks' URLs: signed JSON POSTs taken from the
// store's outbox, retried with exponential backoff, at least once (issue 14).
package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Header names of a delivery.
const (
	// SignatureHeader carries "t=<unix seconds>,v1=<hex HMAC-SHA256 of t + "." + body>".
	SignatureHeader = "X-Sluice-Signature"
	// DeliveryHeader carries the delivery's id: the same on every retry (idempotency id).
	DeliveryHeader = "X-Sluice-Delivery"
	// EventHeader carries the event's type.
	EventHeader = "X-Sluice-Event"
)

// Sign returns the signature header's value for body sent at unix time t.
func Sign(secret string, t int64, body []byte) string {
	return "t=" + strconv.FormatInt(t, 10) + ",v1=" + mac(secret, t, body)
}

func mac(secret string, t int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(strconv.FormatInt(t, 10)))
	m.Write([]byte("."))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// ErrSignature is wrapped by Verify's errors.
var ErrSignature = errors.New("webhook signature")

// Verify checks a signature header against body and secret, and that its time is within
// tolerance of now (0: any time). It is what a receiver written in Go would do.
func Verify(secret, header string, body []byte, tolerance time.Duration, now time.Time) error {
	if len(header) > 1024 {
		return fmt.Errorf("%w: header longer than 1024 bytes", ErrSignature)
	}
	var ts int64
	var sigs []string
	haveT := false
	for part := range strings.SplitSeq(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		switch k {
		case "t":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fmt.Errorf("%w: bad time %q", ErrSignature, v)
			}
			ts, haveT = n, true
		case "v1":
			sigs = append(sigs, v)
		}
	}
	if !haveT || len(sigs) == 0 {
		return fmt.Errorf("%w: header %q lacks t= or v1=", ErrSignature, header)
	}
	if tolerance > 0 {
		if d := now.Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
			return fmt.Errorf("%w: time %d is %v away from now", ErrSignature, ts, d.Round(time.Second))
		}
	}
	want := mac(secret, ts, body)
	for _, s := range sigs {
		if hmac.Equal([]byte(s), []byte(want)) {
			return nil
		}
	}
	return fmt.Errorf("%w: no v1 signature matches", ErrSignature)
}
