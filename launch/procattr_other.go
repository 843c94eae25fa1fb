//go:build !linux

package launch

import "syscall"

func childAttr() *syscall.SysProcAttr { return nil }
