package launch

import "syscall"

// childAttr makes a launched server or worker die with Train's process, so
// a crashed or killed `pacer train` leaves no orphans behind.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
