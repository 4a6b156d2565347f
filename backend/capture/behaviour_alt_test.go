package capture

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkpointPos is the capture order of the named checkpoint.
func checkpointPos(t *testing.T, rec *Record, name string) int {
	t.Helper()
	for i, cp := range rec.FilesystemCheckpoints {
		if cp.Name == name {
			return journalPos(rec, "filesystem_checkpoints", i)
		}
	}
	t.Fatalf("no checkpoint %q in %+v; limitations %v", name, rec.FilesystemCheckpoints, rec.Limitations)
	return -1
}

func TestBehaviourFullScreenProgramUsesAlternateScreen(t *testing.T) {
	// less, a real full-screen program, pages a 40-line file: it switches
	// to the alternate screen, shows the first page, pages down on a space
	// to the end, and on "q" restores the normal screen.
	work := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "line %02d\n", i)
	}
	if err := os.WriteFile(filepath.Join(work, "notes.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, opts := shScenario(t, "", func(m obj) {
		m["executable"], m["arguments"], m["working_directory"] = "/usr/bin/less", []any{"notes.txt"}, work
		m["environment"] = obj{"PATH": "/usr/bin:/bin"}
		m["events"] = []any{
			obj{"type": "input", "at_ms": 500, "data": " "},
			obj{"type": "input", "at_ms": 1000, "data": "q"},
		}
		m["checkpoints"] = []any{
			obj{"name": "first_page", "trigger": obj{"type": "terminal_literal", "value": "line 23"}},
			obj{"name": "at_end", "trigger": obj{"type": "terminal_literal", "value": "line 40"}},
		}
	})
	rec := capture(t, sc, opts)
	if rec.Exit.Code == nil || *rec.Exit.Code != 0 {
		t.Fatalf("exit %+v, frames %q", rec.Exit, output(rec))
	}
	if out := output(rec); !strings.Contains(out, "\x1b[?1049h") || !strings.Contains(out, "\x1b[?1049l") {
		t.Errorf("less did not switch screens: %q", out)
	}
	first := lastRenderedBefore(rec, checkpointPos(t, rec, "first_page"))
	if first == nil || first.ActiveBuffer != BufferAlternate || strings.TrimRight(first.Lines[0], " ") != "line 01" ||
		strings.TrimRight(first.Lines[22], " ") != "line 23" {
		t.Errorf("screen at first_page: %+v", first)
	}
	end := lastRenderedBefore(rec, checkpointPos(t, rec, "at_end"))
	if end == nil || end.ActiveBuffer != BufferAlternate || !strings.Contains(strings.Join(end.Lines, "\n"), "line 40") ||
		strings.Contains(strings.Join(end.Lines, "\n"), "line 01 ") {
		t.Errorf("screen at at_end: %+v", end)
	}
	if cp := checkpointNamed(t, rec, "at_end"); cp.AtMS < rec.InteractionEvents[0].DispatchedAtMS {
		t.Errorf("at_end at %d ms, before the space at %d ms", cp.AtMS, rec.InteractionEvents[0].DispatchedAtMS)
	}
	last := rec.RenderedFrames[len(rec.RenderedFrames)-1]
	if last.ActiveBuffer != BufferNormal || strings.Contains(strings.Join(last.Lines, "\n"), "line ") {
		t.Errorf("screen after less: %+v", last)
	}
	// Every switch is visible: normal (or none yet), then alternate, then normal.
	states := []string{}
	for _, f := range rec.RenderedFrames {
		if len(states) == 0 || states[len(states)-1] != f.ActiveBuffer {
			states = append(states, f.ActiveBuffer)
		}
	}
	if s := strings.Join(states, " "); s != "alternate normal" && s != "normal alternate normal" {
		t.Errorf("active buffers %s", s)
	}
}

func TestBehaviourAlternateScreenAtCheckpoint(t *testing.T) {
	// tput writes the terminfo smcup/rmcup of xterm-256color.
	script := `echo 'on the normal screen'; tput smcup; tput clear; echo 'on the alternate screen'; sleep 0.5; tput rmcup; echo back`
	sc, opts := shScenario(t, script, func(m obj) {
		m["checkpoints"] = []any{
			obj{"name": "during", "trigger": obj{"type": "time", "at_ms": 250}},
			obj{"name": "settled", "trigger": obj{"type": "settled"}},
		}
	})
	rec := capture(t, sc, opts)
	during := lastRenderedBefore(rec, checkpointPos(t, rec, "during"))
	if during == nil || during.ActiveBuffer != BufferAlternate || strings.TrimRight(during.Lines[0], " ") != "on the alternate screen" ||
		during.CursorY != 1 {
		t.Errorf("screen at the time checkpoint: %+v; frames %q", during, output(rec))
	}
	// (At a root_exit checkpoint the root's last output may still be in
	// the PTY, unread; by settlement it has been read.)
	after := lastRenderedBefore(rec, checkpointPos(t, rec, "settled"))
	if after == nil || after.ActiveBuffer != BufferNormal || strings.Join(trimmed(after.Lines)[:3], "|") != "on the normal screen|back|" {
		t.Errorf("screen at settlement: %+v", after)
	}
}

func TestBehaviourResizeWhileRunning(t *testing.T) {
	// The shell reports each SIGWINCH with the size the terminal has then.
	script := `trap 'echo "winch $(stty size)"' WINCH; echo "size $(stty size)"; i=0;` +
		` while [ $i -lt 20 ]; do sleep 0.05; i=$((i+1)); done; echo "final $(stty size)"`
	sc, opts := shScenario(t, script, func(m obj) {
		m["events"] = []any{
			obj{"type": "resize", "at_ms": 250, "columns": 100, "rows": 30},
			obj{"type": "resize", "at_ms": 600, "columns": 40, "rows": 10},
		}
	})
	rec := capture(t, sc, opts)
	out := output(rec)
	for _, want := range []string{"size 24 80\r\n", "winch 30 100\r\n", "winch 10 40\r\n", "final 10 40\r\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("frames %q lack %q", out, want)
		}
	}
	ev := rec.InteractionEvents
	if len(ev) != 2 || ev[0].Type != EventResize || ev[0].Data != "100x30" || ev[1].Data != "40x10" ||
		ev[0].Outcome != OutcomeDispatched || ev[1].Outcome != OutcomeDispatched {
		t.Fatalf("interaction events %+v", ev)
	}
	// Each resize is followed in the journal by a rendered frame at the new
	// size, and every rendered frame has the size in force when it was
	// journaled.
	cols, rows := 80, 24
	resized := 0
	for i, e := range rec.EventJournal {
		switch e.Collection {
		case "interaction_events":
			cols, rows = []int{100, 40}[e.Index], []int{30, 10}[e.Index]
			if n := rec.EventJournal[i+1]; n.Collection != "rendered_frames" {
				t.Errorf("resize %d is followed by %+v", e.Index, n)
			}
		case "rendered_frames":
			f := rec.RenderedFrames[e.Index]
			if f.Columns != cols || f.Rows != rows || len(f.Lines) != rows {
				t.Errorf("rendered frame %d is %dx%d (%d lines), want %dx%d", f.Sequence, f.Columns, f.Rows, len(f.Lines), cols, rows)
			}
			for y, l := range f.Lines {
				if len(l) != f.Columns {
					t.Errorf("rendered frame %d row %d is %d wide: %q", f.Sequence, y, len(l), l)
				}
			}
			if cols == 100 && strings.Contains(strings.Join(f.Lines, "\n"), "winch 30 100") {
				resized++
			}
		}
	}
	if resized == 0 {
		t.Error("no 100x30 rendered frame shows the program's answer to the resize")
	}
	last := rec.RenderedFrames[len(rec.RenderedFrames)-1]
	if got := strings.TrimRight(strings.Join(last.Lines, "|"), " |"); !strings.HasSuffix(got, "final 10 40") {
		t.Errorf("last screen %q", got)
	}
}
