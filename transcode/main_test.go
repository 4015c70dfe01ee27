package transcode

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/sluicemedia/sluice/internal/testutil"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		testutil.RemoveClips()
		os.Exit(code)
	}))
}
