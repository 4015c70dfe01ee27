package segtest

import (
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/testutil/browser"
)

// Play plays a live url in headless Chromium (kind "hls" or "dash") for d. A player that did
// not start within the harness's 20 s, which happens when Chromium itself is starved on a
// loaded machine, gets one more try; the first result is logged.
func Play(t testing.TB, kind, url string, d time.Duration, opts ...browser.Option) browser.Result {
	t.Helper()
	res := browser.Play(t, kind, url, d, opts...)
	if !res.OK && strings.Contains(res.Reason, "did not start") {
		t.Logf("first try: %s; samples %+v", res, res.Samples)
		res = browser.Play(t, kind, url, d, opts...)
	}
	return res
}
