package testutil

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// LogBuffer returns a logger of every level (debug included) writing text into a buffer, for
// a test that reads what the code under test logged (NoSecret).
func LogBuffer() (*slog.Logger, *SyncBuffer) {
	buf := &SyncBuffer{}
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

// NoSecret fails t when secret appears in what logs holds or in the text of one of errs (nil
// ones skipped): an address's password, token or key must never be shown.
func NoSecret(t testing.TB, secret string, logs *SyncBuffer, errs ...error) {
	t.Helper()
	if secret == "" {
		t.Fatal("NoSecret: no secret to look for")
	}
	if logs != nil {
		for line := range strings.Lines(logs.String()) {
			if strings.Contains(line, secret) {
				t.Errorf("the secret %q is logged: %s", secret, strings.TrimSpace(line))
			}
		}
	}
	for _, err := range errs {
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("the secret %q is in the error: %v", secret, err)
		}
	}
}

// FailsKeeping runs run with a debug logger into a buffer and a context that ends after d, and
// fails t unless run fails without any of secrets in its error or its log lines.
func FailsKeeping(t testing.TB, d time.Duration, run func(ctx context.Context, log *slog.Logger) error, secrets ...string) {
	t.Helper()
	log, logs := LogBuffer()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	err := run(ctx, log)
	if err == nil {
		t.Fatal("no error")
	}
	t.Logf("%v", err)
	for _, s := range secrets {
		NoSecret(t, s, logs, err)
	}
}
