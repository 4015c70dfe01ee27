//go:build !linux

package main

// reexecWithMadvFree does nothing: MADV_FREE is the runtime's choice on Linux only.
func reexecWithMadvFree() {}
