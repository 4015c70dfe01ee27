package httpts

import (
	"testing"

	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/internal/testutil/streamtest"
)

// The test source: streamtest's constant-bitrate H.264 + AAC stream.
const (
	srcVideoKbps = streamtest.CBRVideoKbps
	srcAudioKbps = streamtest.CBRAudioKbps
)

// makeTS returns an MPEG-TS file of the test source, made once per test binary.
func makeTS(t testing.TB, seconds float64) string { return streamtest.CBRFile(t, seconds, "mpegts") }

// makeFLV returns an FLV file of the test source, made once per test binary.
func makeFLV(t testing.TB, seconds float64) string { return streamtest.CBRFile(t, seconds, "flv") }

// freeTCPPort returns a TCP port that was free a moment ago, for a peer that must listen.
func freeTCPPort(t testing.TB) int { return testutil.FreePort(t) }

// Shared with the other protocol tests (internal/testutil/streamtest).
var (
	cbrArgs           = streamtest.CBRArgs
	readTS            = streamtest.ReadTS
	checkSourceTracks = streamtest.CheckCBRTracks
	runFFmpeg         = streamtest.RunFFmpeg
	ffprobeCodecs     = streamtest.FFprobeCodecs
	play              = streamtest.Play
	collect           = streamtest.Collect
	checkUnits        = streamtest.CheckUnits
	checkRates        = streamtest.CheckRates
	waitFor           = testutil.Eventually
)
