package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testfs"
)

// writeEditableSkill writes a runnable skill "edit-me" whose files the
// test changes between runs.
func writeEditableSkill(t *testing.T, script string) (root, dir string) {
	t.Helper()
	root = t.TempDir()
	dir = filepath.Join(root, "edit-me")
	testfs.WriteTree(t, dir, map[string]string{
		"SKILL.md": "---\nname: edit-me\ndescription: Echoes its input. \u202eevil\n---\nBody.\n",
		"execution.json": `{"schemaVersion":1,"entrypoint":"scripts/run.mjs","files":["scripts/run.mjs","assets/blob.bin"],
"inputSchema":{"type":"object","properties":{"a":{"type":"integer"}}},"outputSchema":{"type":"object","properties":{"got":{"type":"integer"}}},"timeoutMs":5000,"maxOutputBytes":4096}`,
		"assets/blob.bin": "\x7fELF\x00\x01\x02",
		"scripts/run.mjs": script,
	})
	return root, dir
}

func writeScript(t *testing.T, dir, script string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "scripts", "run.mjs"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
}

// raise starts a UI run of edit-me and returns its proposal as raised.
func raise(t *testing.T, ts *testServer) ProposalView {
	t.Helper()
	events, stop := ts.facade.events.subscribe(64)
	defer stop()
	if _, err := ts.facade.StartRun(StartRunArgs{Skill: "edit-me", Input: `{"a":1}`, Workspace: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(20 * time.Second)
	for {
		select {
		case e := <-events:
			if m, ok := e.Data.(map[string]any); ok && e.Name == "proposal" && m["type"] == "raised" {
				return m["proposal"].(ProposalView)
			}
		case <-deadline:
			r, _ := ts.facade.ListRuns(ListRunsArgs{})
			t.Fatalf("no proposal raised (history %s)", r.Runs[0].Envelope)
		}
	}
}

// waitRecorded waits until n runs are in the history.
func waitRecorded(t *testing.T, ts *testServer, n int) {
	t.Helper()
	for i := 0; i < 400; i++ {
		r, _ := ts.facade.ListRuns(ListRunsArgs{})
		if len(r.Runs) >= n {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("fewer than %d runs recorded", n)
}

const echoScript = "let d='';process.stdin.on('data',c=>d+=c);process.stdin.on('end',()=>process.stdout.write(JSON.stringify({got:1})));\n"

// The dialog's files are the frozen snapshot's bytes: a change to the
// folder after the proposal was raised does not reach ProposalFile, binary
// files are reported as binary, and after approving and editing the
// bundle the next proposal is "changed" with the approved bytes to diff.
func TestProposalFileServesTheSnapshotAndTheApprovedRevision(t *testing.T) {
	ts := startServer(t)
	root, dir := writeEditableSkill(t, echoScript)
	if _, err := ts.facade.SetSkillRoots(SetSkillRootsArgs{Roots: []string{root}}); err != nil {
		t.Fatal(err)
	}
	p := raise(t, ts)
	if p.Approval.Status != "new" || !strings.HasPrefix(p.Description, "Echoes its input.") {
		t.Fatalf("first proposal: approval %+v, description %q", p.Approval, p.Description)
	}
	// The folder changes while the dialog is open: the dialog still shows
	// what would run.
	writeScript(t, dir, "// tampered after the proposal was raised\n")
	f, err := ts.facade.ProposalFile(ProposalFileArgs{ProposalID: p.ID, Path: "scripts/run.mjs"})
	if err != nil || f.Current == nil || f.Current.Text != echoScript || f.Current.Binary || f.Change != "" {
		t.Fatalf("snapshot file: %+v %v", f, err)
	}
	b, err := ts.facade.ProposalFile(ProposalFileArgs{ProposalID: p.ID, Path: "assets/blob.bin"})
	if err != nil || b.Current == nil || !b.Current.Binary || b.Current.Text != "" || b.Current.Size != 7 {
		t.Fatalf("binary file: %+v %v", b.Current, err)
	}
	for _, bad := range []ProposalFileArgs{{ProposalID: p.ID, Path: "../SKILL.md"}, {ProposalID: p.ID, Path: "scripts/other.mjs"}, {ProposalID: "nope", Path: "SKILL.md"}} {
		if _, err := ts.facade.ProposalFile(bad); err == nil {
			t.Fatalf("%+v: no error", bad)
		}
	}
	// The folder is put back; approving records the approved revision.
	writeScript(t, dir, echoScript)
	if _, err := ts.facade.Decide(DecideArgs{ProposalID: p.ID, Approve: true}); err != nil {
		t.Fatal(err)
	}
	waitRecorded(t, ts, 1)

	if p2 := raise(t, ts); p2.Approval.Status != "same" || p2.Approval.ApprovedAt == nil || p2.Approval.ApprovedRevision != p.Revision {
		t.Fatalf("same revision again: %+v", p2.Approval)
	} else if _, err := ts.facade.Decide(DecideArgs{ProposalID: p2.ID, Approve: false}); err != nil {
		t.Fatal(err)
	}
	waitRecorded(t, ts, 2)

	edited := strings.Replace(echoScript, "got:1", "got:2", 1)
	writeScript(t, dir, edited)
	p3 := raise(t, ts)
	if p3.Approval.Status != "changed" || len(p3.Approval.Changes) != 1 || p3.Approval.Changes[0].Path != "scripts/run.mjs" || p3.Approval.Changes[0].Kind != "modified" {
		t.Fatalf("after editing: %+v", p3.Approval)
	}
	d, err := ts.facade.ProposalFile(ProposalFileArgs{ProposalID: p3.ID, Path: "scripts/run.mjs"})
	if err != nil || d.Change != "modified" || d.Current.Text != edited || d.Previous == nil || d.Previous.Text != echoScript {
		t.Fatalf("diff sides: %+v %v", d, err)
	}
	ts.facade.Decide(DecideArgs{ProposalID: p3.ID, Approve: false})
}

// fileContent is bounded: text stops at MaxProposalFileText (never inside
// a character), one byte past it is truncated, and NUL or invalid UTF-8 is
// binary.
func TestFileContentBounds(t *testing.T) {
	at := strings.Repeat("a", MaxProposalFileText)
	if c := fileContent([]byte(at)); c.Truncated || len(c.Text) != MaxProposalFileText {
		t.Fatalf("at the limit: truncated=%v len=%d", c.Truncated, len(c.Text))
	}
	if c := fileContent([]byte(at + "b")); !c.Truncated || len(c.Text) != MaxProposalFileText || c.Size != MaxProposalFileText+1 {
		t.Fatalf("one past: truncated=%v len=%d", c.Truncated, len(c.Text))
	}
	split := strings.Repeat("a", MaxProposalFileText-1) + "é" // the limit falls inside é
	if c := fileContent([]byte(split)); !c.Truncated || c.Binary || len(c.Text) != MaxProposalFileText-1 {
		t.Fatalf("cut inside a character: %+v", c.Truncated)
	}
	for _, bin := range [][]byte{{'a', 0, 'b'}, {0xff, 0xfe}} {
		if c := fileContent(bin); !c.Binary || c.Text != "" {
			t.Fatalf("%q: %+v", bin, c)
		}
	}
	if c := fileContent([]byte("\x1b]0;title\x07\u202e")); c.Binary || c.Text == "" {
		t.Fatalf("control characters are text (the UI shows them as markers): %+v", c)
	}
}
