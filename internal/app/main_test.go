package app

import (
	"os"
	"testing"

	"github.com/sluicemedia/sluice/api"
)

func TestMain(m *testing.M) {
	// Every test server hashes the admin password; the production work factor would make each
	// start take seconds under the race detector.
	api.PasswordIterations = 1000
	os.Exit(m.Run())
}
