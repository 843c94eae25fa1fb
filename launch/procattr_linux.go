package launch

import "syscall"

// childAttr makes a launched server or worker die with Train's process, so
// a crashed or killed `pacer train` leaves no orphans behind, and puts it
// in its own process group: a terminal's Ctrl-C reaches only Train, which
// then reads what the job measured before it stops the children in order
// (in the terminal's group, they stopped at once and the summary was lost).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
