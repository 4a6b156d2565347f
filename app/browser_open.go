package app

import (
	"os"
	"syscall"
)

// openBrowser asks the desktop to open url with xdg-open, detached, and
// never waits for it (the process supervisor, if any, reaps it).
func openBrowser(url string) {
	for _, p := range []string{"/usr/bin/xdg-open", "/usr/local/bin/xdg-open"} {
		if _, err := os.Stat(p); err == nil {
			devnull, _ := os.Open(os.DevNull)
			defer devnull.Close()
			syscall.ForkExec(p, []string{"xdg-open", url}, &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{devnull.Fd(), devnull.Fd(), devnull.Fd()}, Sys: &syscall.SysProcAttr{Setsid: true}})
			return
		}
	}
}
