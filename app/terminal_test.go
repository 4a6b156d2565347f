package app

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/creack/pty"
)

// TestIOTerminalDefaults: without hooks, IO asks the kernel: a real
// pseudo-terminal is a terminal, a pipe and a buffer are not; a hook
// replaces the question.
func TestIOTerminalDefaults(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, c := range []struct {
		name string
		w    io.Writer
		want bool
	}{{"pty", tty, true}, {"pipe", w, false}, {"buffer", &bytes.Buffer{}, false}} {
		if got := (IO{Stderr: c.w}).stderrIsTerminal(); got != c.want {
			t.Errorf("%s: stderrIsTerminal %v, want %v", c.name, got, c.want)
		}
	}
	if !(IO{Stderr: w, IsTerminal: func(io.Writer) bool { return true }}).stderrIsTerminal() {
		t.Error("the IsTerminal hook was not asked")
	}
	want := &scriptedTerminal{}
	if got, err := (IO{OpenTerminal: func() (io.ReadWriteCloser, error) { return want, nil }}).openTerminal(); err != nil || got != want {
		t.Errorf("the OpenTerminal hook was not used: %v %v", got, err)
	}
}
