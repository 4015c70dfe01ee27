package storage_test

import (
	"strings"
	"testing"

	"github.com/sluicemedia/sluice/storage"
)

// TestPostgresErrorsHidePassword: a store that cannot be opened says where, without the password.
func TestPostgresErrorsHidePassword(t *testing.T) {
	t.Parallel()
	for _, url := range []string{
		"postgres://sluice:topsecret@127.0.0.1:1/sluice?sslmode=disable&connect_timeout=2", // nothing listens on port 1
		"postgres://sluice:topsecret@127.0.0.1:1/sluice?sslmode=nonsense",
	} {
		s, err := storage.OpenTarget(url)
		if err == nil {
			s.Close()
			t.Fatalf("OpenTarget(%s) succeeded", url)
		}
		if strings.Contains(err.Error(), "topsecret") || !strings.Contains(err.Error(), "127.0.0.1") {
			t.Errorf("error %q: want the host and not the password", err)
		}
	}
}
