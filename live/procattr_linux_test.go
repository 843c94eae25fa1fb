package live

import "syscall"

// childAttr makes a server process a test starts die with the test binary
// (the launcher's own copy is in package launch).
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
