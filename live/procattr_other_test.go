//go:build !linux

package live

import "syscall"

func childAttr() *syscall.SysProcAttr { return nil }
