package avi

import (
	"testing"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// TestMain deletes the clips the tests made (testutil.Clip) once they have run.
func TestMain(m *testing.M) { testutil.RunRemovingClips(m) }
