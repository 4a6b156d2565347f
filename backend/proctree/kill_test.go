package proctree

import "syscall"

func syscallKill(pid int) { syscall.Kill(pid, syscall.SIGKILL) }
