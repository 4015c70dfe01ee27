package app

import (
	"testing"

	"github.com/sluicemedia/sluice/internal/recorder"
	"github.com/sluicemedia/sluice/storage"
)

// TestRecorderStatesAreTheStoreStates: the recorder's entries are stored as they are, so its
// file states must be the store's.
func TestRecorderStatesAreTheStoreStates(t *testing.T) {
	for rec, st := range map[string]string{recorder.StateRecording: storage.FileRecording,
		recorder.StateComplete: storage.FileComplete, recorder.StateRepaired: storage.FileRepaired} {
		if rec != st {
			t.Errorf("recorder state %q is stored as %q", rec, st)
		}
	}
}
