package app

import "syscall"

// openFileLimit is the process's soft limit of open files (RLIMIT_NOFILE); 0 when unknown.
func openFileLimit() uint64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0
	}
	return r.Cur
}
