package app

// The terminal hooks of IO, modelled on cli/cli's IOStreams: the CLI asks
// IO whether a stream is a terminal and opens the controlling terminal
// through it, so tests drive the consent prompt in process while a real
// run uses the real terminal.

import (
	"fmt"
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

// discardTypeahead drops the input waiting on tty, unread (tcflush
// TCIFLUSH), when tty is a terminal device; a scripted terminal (a test's
// IO.OpenTerminal) has no kernel queue and is left alone. A terminal
// device that refuses the flush is an error: its waiting input could
// otherwise answer a question nobody has read.
func discardTypeahead(tty io.Reader) error {
	f, ok := tty.(*os.File)
	if !ok {
		return nil
	}
	if _, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS); err != nil {
		return nil // not a terminal device
	}
	if err := unix.IoctlSetInt(int(f.Fd()), unix.TCFLSH, unix.TCIFLUSH); err != nil {
		return fmt.Errorf("discard input typed before the question: %w", err)
	}
	return nil
}
