package app

import "syscall"

// ptySysProcAttr makes the child a session leader whose controlling
// terminal is its stdin (the pty).
func ptySysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
}

// noTTYSysProcAttr detaches the child from any terminal.
func noTTYSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}
