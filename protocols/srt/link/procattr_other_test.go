//go:build !linux

package link

import "syscall"

// childAttr puts a test's child process in its own process group.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
