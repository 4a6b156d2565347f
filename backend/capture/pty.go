package capture

import (
	"fmt"
	"os"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// ptyBackend names the PTY implementation in the manifest.
const ptyBackend = "github.com/creack/pty v1.1.24"

// openPTY opens a PTY pair of the given size. The master is returned in
// non-blocking mode under the runtime poller, so closing it interrupts a
// pending Read or Write; pty.Open leaves its master blocking (its ioctls
// go through File.Fd), so the master is duplicated and the original closed.
func openPTY(columns, rows int) (master, tty *os.File, err error) {
	m, t, err := pty.Open()
	if err != nil {
		return nil, nil, fmt.Errorf("capture: open pty: %w", err)
	}
	defer m.Close()
	fd, err := unix.Dup(int(m.Fd()))
	if err != nil {
		t.Close()
		return nil, nil, fmt.Errorf("capture: duplicate pty master: %w", err)
	}
	unix.CloseOnExec(fd)
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		t.Close()
		return nil, nil, fmt.Errorf("capture: make pty master non-blocking: %w", err)
	}
	master = os.NewFile(uintptr(fd), "/dev/ptmx")
	if err := setSize(master, columns, rows); err != nil {
		master.Close()
		t.Close()
		return nil, nil, err
	}
	return master, t, nil
}

// setSize sets the PTY's window size (the kernel then sends SIGWINCH to
// the terminal's foreground process group).
func setSize(master *os.File, columns, rows int) error {
	conn, err := master.SyscallConn()
	if err != nil {
		return fmt.Errorf("capture: resize pty: %w", err)
	}
	var ioctlErr error
	err = conn.Control(func(fd uintptr) {
		ioctlErr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(columns)})
	})
	if err == nil {
		err = ioctlErr
	}
	if err != nil {
		return fmt.Errorf("capture: resize pty to %dx%d: %w", columns, rows, err)
	}
	return nil
}

// readAvailable fills buf[n:] with what the master has ready now, without
// waiting for more, and returns the new length. A fast writer's output
// then makes fewer, larger chunks (the kernel hands out at most a few KiB
// per read), each a raw frame and a rendered frame, and a slow writer's
// chunks arrive as soon as before.
func readAvailable(master *os.File, buf []byte, n int) int {
	conn, err := master.SyscallConn()
	if err != nil {
		return n
	}
	for n < len(buf) {
		var got int
		var readErr error
		err := conn.Read(func(fd uintptr) bool {
			got, readErr = unix.Read(int(fd), buf[n:])
			return true // never wait
		})
		if err != nil || readErr != nil || got <= 0 {
			return n
		}
		n += got
	}
	return n
}
