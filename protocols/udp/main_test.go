package udp

import (
	"os"
	"testing"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// TestMain deletes the clips the tests made (testutil.Clip) once they have run.
func TestMain(m *testing.M) {
	code := m.Run()
	testutil.RemoveClips()
	os.Exit(code)
}
