package capture

import (
	"context"

	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/backend/proctree"
)

// FuzzScreen feeds arbitrary bytes, in two writes and across a resize, to
// the capture's screen (xterm.js in the renderer helper): it must never
// hang, and every frame must have the screen's size with the cursor on
// it. The only error allowed is xterm.js itself throwing on the input,
// reported as such (the capture then fails with that message); any other
// failure of the helper's plumbing fails the target.
func FuzzScreen(f *testing.F) {
	for _, seed := range []string{"abc\x1b[2;9r\x1bM", "日本\u0301\x1b[?1049h\x1b[4h😀", "\x1b[?7labcdef\x1b[1J\x1b[2J", "\x1b]8;;u\x1b\\l\x1b[s\x1b[u\x1b#8"} {
		f.Add([]byte(seed), uint8(3), uint8(5), uint8(2))
	}
	node := testNode(f)
	sup, err := proctree.NewSupervisor(proctree.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { sup.Close() })
	h := RendererHelper{Node: node, Supervisor: sup}
	f.Fuzz(func(t *testing.T, data []byte, split, cols, rows uint8) {
		c, r := 1+int(cols)%40, 1+int(rows)%12
		s, err := startScreen(h, Terminal{Columns: c, Rows: r, Scrollback: 10})
		if err != nil {
			t.Fatal(err)
		}
		defer s.close()
		cut := int(split) % (len(data) + 1)
		done := make(chan string, 1)
		go func() {
			defer close(done)
			s.write(data[:cut])
			// xterm.js has at least minColumns columns (a limitation the
			// capture records)
			if f, err := s.snapshot(); err != nil || len(f.Lines) != r || f.Columns != max(c, minColumns) {
				done <- fmt.Sprintf("frame %dx%d with %d lines, want %dx%d (%v)", f.Columns, f.Rows, len(f.Lines), max(c, minColumns), r, err)
				return
			}
			s.resize(max(c/2, 1), r+1)
			s.write(data[cut:])
			if f, err := s.snapshot(); err != nil || len(f.Lines) != r+1 || f.CursorX > f.Columns || f.CursorY >= f.Rows {
				done <- fmt.Sprintf("frame after resize %+v (%v)", f, err)
			}
		}()
		select {
		case msg, ok := <-done:
			if ok && !strings.Contains(msg, "xterm.js failed: ") {
				t.Fatal(msg)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("rendering %q (%dx%d, split at %d) did not finish in 20 s", data, c, r, cut)
		}
	})
}

// TestScreenFailureIsContained kills the renderer helper in the middle of
// a recording: raw frames go on, rendered frames stop with a limitation
// saying why, and the recorder keeps the error the capture then fails
// with.
func TestScreenFailureIsContained(t *testing.T) {
	h := testHelper(t)
	sc := parseOK(t, mustJSON(t, obj{"approved": true, "executable": "/bin/sh", "working_directory": "/"}))
	norm, err := newNormalizer(sc, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rec := &Record{}
	scr := startTestScreen(t, h, sc.Terminal)
	r := &recorder{rec: rec, limits: sc.Limits, norm: norm, text: stream{literals: norm.literals}, scr: scr}
	r.chunk([]byte("first\r\n"), 0)
	syscall.Kill(scr.tree.Pid(), syscall.SIGKILL)
	<-scr.tree.Exited()
	r.chunk([]byte("second\r\n"), time.Millisecond)
	r.chunk([]byte("third\r\n"), 2*time.Millisecond)
	if len(rec.Frames) != 3 || len(rec.RenderedFrames) != 1 || !rec.Truncated {
		t.Fatalf("frames %d, rendered %d, truncated %v", len(rec.Frames), len(rec.RenderedFrames), rec.Truncated)
	}
	if l := rec.Limitations[len(rec.Limitations)-1]; !strings.Contains(l, "rendered frames stopped: the terminal renderer (xterm.js helper) failed") {
		t.Fatalf("limitation %q", l)
	}
	if r.screenErr == nil {
		t.Fatal("the recorder forgot the renderer's failure")
	}
}

// TestCaptureFailsWithoutItsRenderer: a capture whose renderer cannot
// start (no pinned Node) is refused before launch with an error naming
// it, and a capture whose renderer fails (here at once: its hello comes
// after the launch, TestCaptureFailsWhenItsRendererFailsItsHello) returns
// that error (with the record, for diagnosis), never a record that
// merely looks shorter.
func TestCaptureFailsWithoutItsRenderer(t *testing.T) {
	sc, opts := shScenario(t, `echo hi`, nil)
	sup := newSupervisor(t)
	opts.Node = "/bin/false"
	rec, err := Capture(context.Background(), sup, sc, opts)
	if err == nil || rec == nil || !strings.Contains(err.Error(), "terminal renderer (xterm.js helper) failed") {
		t.Fatalf("record %v, err %v", rec != nil, err)
	}
	opts.Node = ""
	if _, err := Capture(context.Background(), sup, sc, opts); err == nil || !strings.Contains(err.Error(), "pinned Node") {
		t.Fatalf("err %v", err)
	}
}
