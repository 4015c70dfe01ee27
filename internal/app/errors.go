package app

import (
	"fmt"

	"github.com/sluicemedia/sluice/api"
)

// ErrShuttingDown is what Manager.Start answers once the server stops its processes (503).
var ErrShuttingDown = fmt.Errorf("the server is shutting down: %w", api.ErrNotAvailable)
