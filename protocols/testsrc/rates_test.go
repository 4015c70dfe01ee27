package testsrc

import "github.com/sluicemedia/sluice/internal/testutil/streamtest"

// checkRates is shared with the other protocol tests (internal/testutil/streamtest).
var checkRates = streamtest.CheckRates
