package hostile

import (
	"testing"

	"github.com/sluicemedia/sluice/internal/testutil"
)

// TestHostile runs every case, one after another, each against its own server.
func TestHostile(t *testing.T) {
	testutil.RequireFFmpeg(t)
	for _, c := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"rtmp-amplification", testRTMPAmplification},
		{"player-window-bytes", testPlayerWindowBytes},
		{"http-connections", testHTTPConnections},
		{"http-many-addresses", testHTTPManyAddresses},
		{"login", testLogin},
		{"start-remove-race", testStartRemoveRace},
		{"srt-listen", testSRTListen},
		{"srt-module", testSRTModule},
		{"sigterm", testSIGTERM},
		{"tokens", testTokens},
		{"store", testStore},
		{"passed", testPassed},
	} {
		t.Run(c.name, c.run)
	}
}
