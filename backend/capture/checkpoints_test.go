package capture

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func checkpointNamed(t *testing.T, rec *Record, name string) FilesystemCheckpoint {
	t.Helper()
	for _, cp := range rec.FilesystemCheckpoints {
		if cp.Name == name {
			return cp
		}
	}
	t.Fatalf("no checkpoint %q in %+v", name, rec.FilesystemCheckpoints)
	return FilesystemCheckpoint{}
}

func fileIn(files []FileState, path string) *FileState {
	for i := range files {
		if files[i].Path == path {
			return &files[i]
		}
	}
	return nil
}

// effectsString renders effects as "status path" lines.
func effectsString(effects []FileEffect) string {
	var parts []string
	for _, e := range effects {
		parts = append(parts, e.Status+" "+e.Path)
	}
	return strings.Join(parts, ", ")
}

func TestCheckpointsTransientFileAndModification(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "keep"), "a\n")
	script := fmt.Sprintf(`echo x > %[1]s/tmp; echo b >> %[1]s/keep; printf 'step-one\n'; sleep 0.5; rm %[1]s/tmp; printf 'step-two\n'; sleep 0.5`, root)
	sc, opts := shScenario(t, script, func(m obj) {
		m["filesystem_roots"] = []any{root}
		m["checkpoints"] = []any{
			obj{"name": "one", "trigger": obj{"type": "terminal_literal", "value": "step-one"}},
			obj{"name": "two", "trigger": obj{"type": "terminal_literal", "value": "step-two"}},
		}
	})
	rec := capture(t, sc, opts)
	var names []string
	for _, cp := range rec.FilesystemCheckpoints {
		names = append(names, cp.Name)
	}
	if strings.Join(names, " ") != "before one two after_settlement" {
		t.Fatalf("checkpoints %v; limitations %v", names, rec.Limitations)
	}
	before := checkpointNamed(t, rec, "before")
	if len(before.Files) != 2 || before.Files[0].Path != "<filesystem-root-0>" || before.Files[0].Type != FileTypeDirectory ||
		before.Files[1].Path != "<filesystem-root-0>/keep" || *before.Files[1].SHA256 != sum("a\n") || before.Files[1].Size != 2 ||
		before.Files[1].Mode != 0o644 || before.Files[1].SymlinkTarget != nil || before.Files[0].SHA256 != nil || len(before.Effects) != 0 {
		t.Errorf("before %+v", before)
	}
	one := checkpointNamed(t, rec, "one")
	if got := effectsString(one.Effects); got != "modified <filesystem-root-0>/keep, created <filesystem-root-0>/tmp" {
		t.Errorf("effects of one: %s", got)
	}
	if e := one.Effects[0]; *e.Before.SHA256 != sum("a\n") || *e.After.SHA256 != sum("a\nb\n") {
		t.Errorf("modification %+v → %+v", e.Before, e.After)
	}
	if e := one.Effects[1]; e.Before != nil || e.After == nil || *e.After.SHA256 != sum("x\n") {
		t.Errorf("creation %+v", e)
	}
	two := checkpointNamed(t, rec, "two")
	if got := effectsString(two.Effects); got != "deleted <filesystem-root-0>/tmp" || two.Effects[0].After != nil || two.Effects[0].Before == nil {
		t.Errorf("effects of two: %s", got)
	}
	if after := checkpointNamed(t, rec, "after_settlement"); len(after.Effects) != 0 {
		t.Errorf("effects of after_settlement: %s", effectsString(after.Effects))
	}
	if got := effectsString(rec.FilesystemEffects); got != "modified <filesystem-root-0>/keep" {
		t.Errorf("record effects: %s", got)
	}
	if len(rec.FilesBefore) != 2 || len(rec.FilesAfter) != 2 || *rec.FilesAfter[1].SHA256 != sum("a\nb\n") {
		t.Errorf("files before %+v after %+v", rec.FilesBefore, rec.FilesAfter)
	}
	for i := 1; i < len(rec.FilesystemCheckpoints); i++ {
		if rec.FilesystemCheckpoints[i].AtMS < rec.FilesystemCheckpoints[i-1].AtMS {
			t.Errorf("checkpoint times go back: %+v", rec.FilesystemCheckpoints)
		}
	}
	if rec.Truncated {
		t.Errorf("truncated: %v", rec.Limitations)
	}
}

func TestCheckpointLiteralSecondOccurrenceAcrossChunks(t *testing.T) {
	root := t.TempDir()
	// The second "go!" arrives in two chunks; "one" exists when it
	// completes, "two" only later.
	script := fmt.Sprintf(`printf 'go!\n'; sleep 0.3; touch %[1]s/one; printf 'g'; sleep 0.3; printf 'o!\n'; sleep 0.5; touch %[1]s/two`, root)
	sc, opts := shScenario(t, script, func(m obj) {
		m["filesystem_roots"] = []any{root}
		m["checkpoints"] = []any{
			obj{"name": "second", "trigger": obj{"type": "terminal_literal", "value": "go!", "occurrence": 2}},
			obj{"name": "third", "trigger": obj{"type": "terminal_literal", "value": "go!", "occurrence": 3}},
			obj{"name": "exited", "trigger": obj{"type": "root_exit"}},
			obj{"name": "calm", "trigger": obj{"type": "settled"}},
			obj{"name": "late", "trigger": obj{"type": "time", "at_ms": 300000}},
		}
	})
	rec := capture(t, sc, opts)
	var names []string
	for _, cp := range rec.FilesystemCheckpoints {
		names = append(names, cp.Name)
	}
	if strings.Join(names, " ") != "before second exited calm after_settlement" {
		t.Fatalf("checkpoints %v", names)
	}
	second := checkpointNamed(t, rec, "second")
	if fileIn(second.Files, "<filesystem-root-0>/one") == nil || fileIn(second.Files, "<filesystem-root-0>/two") != nil {
		t.Errorf("second: %+v", second.Files)
	}
	if got := effectsString(checkpointNamed(t, rec, "exited").Effects); got != "created <filesystem-root-0>/two" {
		t.Errorf("exited effects: %s", got)
	}
	limits := strings.Join(rec.Limitations, "\n")
	if !strings.Contains(limits, `checkpoint "third" was not taken: its terminal_literal trigger saw 2 of 3 occurrences`) ||
		!strings.Contains(limits, `checkpoint "late" was not taken: its time trigger (300000 ms)`) {
		t.Errorf("limitations %v", rec.Limitations)
	}
	if rec.Truncated {
		t.Errorf("truncated: %v", rec.Limitations)
	}
}

func TestCheckpointTimeTriggerAndSymlinks(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "target"), "t")
	if err := os.Symlink("/etc/passwd", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(root, filepath.Join(root, "loop")); err != nil { // never followed
		t.Fatal(err)
	}
	// The link changes 600 ms after launch at the earliest (the sleep
	// before it), the later checkpoint is due 500 ms after that, and the
	// target outlives it. A loaded machine stretched the shell's start-up
	// and its forks past the later checkpoint, so the test states what it
	// needs from the record and runs again with its times scaled up when
	// that did not hold (withTimingPrecondition): the early checkpoint
	// was walked before the change, and the later one was taken after the
	// output the shell writes once the link has changed.
	var early, later FilesystemCheckpoint
	withTimingPrecondition(t, func(t *testing.T, scale int) (*Record, string) {
		script := fmt.Sprintf(`sleep %d.%d; ln -sf target %s/link; printf 'changed\n'; sleep %d`, 6*scale/10, 6*scale%10, root, scale)
		sc, opts := shScenario(t, script, func(m obj) {
			m["filesystem_roots"] = []any{root, filepath.Join(root, "missing")}
			m["checkpoints"] = []any{
				obj{"name": "early", "trigger": obj{"type": "time", "at_ms": 100}},
				obj{"name": "later", "trigger": obj{"type": "time", "at_ms": 1100 * scale}},
			}
		})
		rec := capture(t, sc, opts)
		// Put the link back for the next run, if there is one.
		if err := os.Remove(filepath.Join(root, "link")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/etc/passwd", filepath.Join(root, "link")); err != nil {
			t.Fatal(err)
		}
		early, later = checkpointNamed(t, rec, "early"), FilesystemCheckpoint{}
		if l := fileIn(early.Files, "<filesystem-root-0>/link"); l != nil && l.SymlinkTarget != nil && *l.SymlinkTarget == "target" {
			// The change was seen, so the walk came after it (a loaded
			// machine did so in 1 of 45 runs): a time trigger that fires
			// late every time fails at every scale.
			return rec, fmt.Sprintf("the early checkpoint (due at 100 ms, taken at %d ms) was walked after the change", early.AtMS)
		}
		changed := -1
		for k, f := range rec.Frames {
			if strings.Contains(f.Data, "changed") {
				changed = journalPos(rec, "frames", k)
			}
		}
		for i, cp := range rec.FilesystemCheckpoints {
			if cp.Name == "later" {
				if p := journalPos(rec, "filesystem_checkpoints", i); changed < 0 || p < changed {
					return rec, fmt.Sprintf("the later checkpoint (%d ms) was taken before the shell's output after the change was read", cp.AtMS)
				}
				later = cp
				return rec, ""
			}
		}
		return rec, "the later checkpoint was not taken before the root exited"
	})
	if early.AtMS < 100 || later.AtMS < 1100 {
		t.Errorf("taken at %d and %d ms", early.AtMS, later.AtMS)
	}
	link := fileIn(early.Files, "<filesystem-root-0>/link")
	if link == nil || link.Type != FileTypeSymlink || *link.SymlinkTarget != "/etc/passwd" || link.Size != 11 || link.SHA256 != nil {
		t.Errorf("early link %+v", link)
	}
	loop := fileIn(early.Files, "<filesystem-root-0>/loop")
	if loop == nil || loop.Type != FileTypeSymlink || *loop.SymlinkTarget != "<filesystem-root-0>" || len(early.Files) != 4 {
		t.Errorf("loop %+v in %+v", loop, early.Files)
	}
	if got := effectsString(later.Effects); got != "modified <filesystem-root-0>/link" || *later.Effects[0].After.SymlinkTarget != "target" {
		t.Errorf("later effects: %s", got)
	}
}

func TestCheckpointLimits(t *testing.T) {
	// The tree: root, d, d/e, d/e/f (5 bytes), g (5 bytes): 5 entries,
	// 10 bytes, deepest entry 3 levels down.
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "d", "e", "f"), "12345")
	writeFile(t, filepath.Join(root, "g"), "67890")
	cases := []struct {
		limit    string
		value    int
		exceeded bool
	}{
		{"files", 5, false}, {"files", 4, true},
		{"file_bytes", 10, false}, {"file_bytes", 9, true},
		{"filesystem_depth", 3, false}, {"filesystem_depth", 2, true},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s=%d", c.limit, c.value), func(t *testing.T) {
			sc, opts := shScenario(t, "true", func(m obj) {
				m["filesystem_roots"] = []any{root}
				m["limits"] = obj{c.limit: c.value}
			})
			rec := capture(t, sc, opts)
			before, after := rec.FilesystemCheckpoints[0], rec.FilesystemCheckpoints[1]
			if rec.Truncated != c.exceeded || before.Truncated != c.exceeded || after.Truncated != c.exceeded {
				t.Fatalf("truncated %v/%v/%v: %v", rec.Truncated, before.Truncated, after.Truncated, rec.Limitations)
			}
			if len(after.Effects) != 0 || len(rec.FilesystemEffects) != 0 {
				t.Errorf("effects %s / %s", effectsString(after.Effects), effectsString(rec.FilesystemEffects))
			}
			want := fmt.Sprintf(`filesystem checkpoint "before" exceeded limits.%s (%d`, c.limit, c.value)
			if got := strings.Join(rec.Limitations, "\n"); strings.Contains(got, want) != c.exceeded {
				t.Errorf("limitations %v", rec.Limitations)
			}
			files := before.Files
			switch {
			case !c.exceeded:
				if len(files) != 5 || *fileIn(files, "<filesystem-root-0>/d/e/f").SHA256 != sum("12345") || *fileIn(files, "<filesystem-root-0>/g").SHA256 != sum("67890") {
					t.Errorf("files %+v", files)
				}
			case c.limit == "files":
				if len(files) != 4 || fileIn(files, "<filesystem-root-0>/g") != nil {
					t.Errorf("files %+v", files)
				}
			case c.limit == "file_bytes":
				if len(files) != 5 || *fileIn(files, "<filesystem-root-0>/d/e/f").SHA256 != sum("12345") || fileIn(files, "<filesystem-root-0>/g").SHA256 != nil {
					t.Errorf("files %+v", files)
				}
			case c.limit == "filesystem_depth":
				if len(files) != 4 || fileIn(files, "<filesystem-root-0>/d/e/f") != nil || fileIn(files, "<filesystem-root-0>/d/e") == nil {
					t.Errorf("files %+v", files)
				}
			}
		})
	}
}

func TestLiteralCounting(t *testing.T) {
	for _, c := range []struct {
		value  string
		want   int
		pieces []string
		fireAt int // index of the piece that reaches want, -1 never
	}{
		{"aa", 2, []string{"aaa"}, -1}, // non-overlapping: one occurrence
		{"aa", 2, []string{"aaa", "a"}, 1},
		{"abc", 1, []string{"xa", "b", "cx"}, 2},
		{"abc", 2, []string{"abcab", "c"}, 1},
		{"é!", 1, []string{"\xc3", "\xa9!"}, 1},
	} {
		p := &pendingCheckpoint{Checkpoint: Checkpoint{Trigger: Trigger{Type: TriggerTerminalLiteral, Value: c.value, Occurrence: c.want}}}
		got := -1
		for i, piece := range c.pieces {
			if p.feed(piece) && got < 0 {
				got = i
			}
		}
		if got != c.fireAt {
			t.Errorf("%q×%d in %q: fired at %d, want %d", c.value, c.want, c.pieces, got, c.fireAt)
		}
	}
}

func TestSnapshotDiffIgnoresUnobservedEntries(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a"), "1")
	writeFile(t, filepath.Join(root, "b"), "2")
	lim := DefaultLimits()
	full := takeSnapshot(context.Background(), []string{root}, lim)
	lim.Files = 2
	cut := takeSnapshot(context.Background(), []string{root}, lim)
	if !cut.filesStopped || len(cut.keys) != 2 {
		t.Fatalf("cut %+v", cut)
	}
	if d := diff(full, cut); len(d) != 0 {
		t.Errorf("full→cut %+v", d)
	}
	if d := diff(cut, full); len(d) != 0 {
		t.Errorf("cut→full %+v", d)
	}
	lim = DefaultLimits()
	lim.FileBytes = 1
	unhashed := takeSnapshot(context.Background(), []string{root}, lim)
	if d := diff(full, unhashed); len(d) != 0 {
		t.Errorf("full→unhashed %+v", d)
	}
}
