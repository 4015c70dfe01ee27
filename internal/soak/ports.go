package soak

import "github.com/sluicemedia/sluice/internal/tooling"

// Ports hands out loopback ports that are free on both TCP and UDP, never the same twice.
type Ports = tooling.Ports
