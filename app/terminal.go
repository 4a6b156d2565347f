package app

// The terminal hooks of IO, modelled on cli/cli's IOStreams: the CLI asks
// IO whether a stream is a terminal and opens the controlling terminal
// through it, so tests drive the consent prompt in process while a real
// run uses the real terminal.

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// openTerminal opens the controlling terminal for a consent prompt
// (IO.OpenTerminal, /dev/tty by default).
func (s IO) openTerminal() (io.ReadWriteCloser, error) {
	if s.OpenTerminal != nil {
		return s.OpenTerminal()
	}
	return os.OpenFile("/dev/tty", os.O_RDWR, 0)
}

// stderrIsTerminal reports whether Stderr is a terminal (IO.IsTerminal,
// isTerminal by default).
func (s IO) stderrIsTerminal() bool {
	if s.IsTerminal != nil {
		return s.IsTerminal(s.Stderr)
	}
	return isTerminal(s.Stderr)
}

// isTerminal reports whether w is an *os.File on a terminal device.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
