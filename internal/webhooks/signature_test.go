package webhooks

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSignVerify(t *testing.T) {
	body := []byte(`{"type":"created","id":"0123456789abcdef01234567"}`)
	now := time.Unix(1_800_000_000, 0)
	h := Sign("s3cret-s3cret-s3cret", now.Unix(), body)
	if !strings.HasPrefix(h, "t=1800000000,v1=") || len(h) != len("t=1800000000,v1=")+64 {
		t.Fatalf("header %q", h)
	}
	if err := Verify("s3cret-s3cret-s3cret", h, body, time.Minute, now); err != nil {
		t.Fatalf("good signature refused: %v", err)
	}
	for name, c := range map[string]struct {
		secret, header string
		body           []byte
		at             time.Time
	}{
		"wrong secret": {"another-secret-value", h, body, now},
		"changed body": {"s3cret-s3cret-s3cret", h, append([]byte(nil), append(body[:len(body)-1], ' ', '}')...), now},
		"old":          {"s3cret-s3cret-s3cret", h, body, now.Add(10 * time.Minute)},
		"no v1":        {"s3cret-s3cret-s3cret", "t=1800000000", body, now},
		"garbage":      {"s3cret-s3cret-s3cret", "v1=zz,t=x", body, now},
		"long":         {"s3cret-s3cret-s3cret", strings.Repeat("v1=00,", 400), body, now},
	} {
		if err := Verify(c.secret, c.header, c.body, time.Minute, c.at); !errors.Is(err, ErrSignature) {
			t.Errorf("%s: %v, want ErrSignature", name, err)
		}
	}
}

func TestBackoffDoublesToCap(t *testing.T) {
	d := New(nil, Options{RetryMin: time.Second, RetryMax: 10 * time.Minute})
	var got []time.Duration
	for n := 1; n <= 12; n++ {
		got = append(got, d.backoff(n))
	}
	if got[0] != time.Second || got[1] != 2*time.Second || got[9] != 512*time.Second || got[10] != 10*time.Minute || got[11] != 10*time.Minute {
		t.Fatalf("backoff %v", got)
	}
}
