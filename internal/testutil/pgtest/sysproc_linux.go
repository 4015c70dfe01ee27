package pgtest

import "syscall"

// sysProcAttr runs a PostgreSQL program with cred (nil: as this process's user), in a process
// group of its own (a terminal's Ctrl-C reaches the test binary, which stops the server), and
// killed if the test binary dies without stopping it.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
