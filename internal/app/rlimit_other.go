//go:build !linux

package app

// openFileLimit is unknown here: the connection caps keep their defaults.
func openFileLimit() uint64 { return 0 }
