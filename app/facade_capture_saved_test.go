package app

import (
	"bytes"
	"os"
	"testing"
)

// TestCheckSavedReadsTheFileOnDisk: the check after a UI capture's save
// verifies the file as it is on disk, not the bytes held in memory: the
// real capture's file passes; the same file with one byte changed on disk,
// or gone, is evidence_integrity_mismatch although the bytes in memory
// still verify.
func TestCheckSavedReadsTheFileOnDisk(t *testing.T) {
	ts := startServer(t)
	work := t.TempDir()
	allowCaptures(t, ts, work)
	events, stop := ts.facade.events.subscribe(256)
	defer stop()
	res, err := ts.facade.StartCapture(StartCaptureArgs{Scenario: uiScenario(work, "echo saved", 10000)})
	if err != nil {
		t.Fatal(err)
	}
	got := waitCapture(t, events, res.CaptureID)
	last := got[len(got)-1]
	if last.State != "done" || last.EvidenceID == "" {
		t.Fatalf("outcome %+v", last)
	}
	lib, id := ts.facade.env.lib(), last.EvidenceID
	out, err := os.ReadFile(lib.Path(id))
	if err != nil {
		t.Fatal(err)
	}
	if err := checkSaved(ts.facade.ctx, lib, id, out); err != nil {
		t.Fatalf("the saved file: %v", err)
	}
	if _, issues := lib.VerifySaved(ts.facade.ctx, id, out); len(issues) > 0 {
		t.Fatalf("the bytes in memory do not verify: %v", issues)
	}

	i := bytes.Index(out, []byte("saved"))
	if i < 0 {
		t.Fatalf("no output in %s", out)
	}
	changed := bytes.Clone(out)
	changed[i] = 'S' // same size, valid JSON, another record
	if err := os.WriteFile(lib.Path(id), changed, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := checkSaved(ts.facade.ctx, lib, id, out); codeOf(err) != "evidence_integrity_mismatch" {
		t.Errorf("a file changed on disk: %v, want evidence_integrity_mismatch", err)
	}
	if err := os.Remove(lib.Path(id)); err != nil {
		t.Fatal(err)
	}
	if err := checkSaved(ts.facade.ctx, lib, id, out); codeOf(err) != "evidence_integrity_mismatch" {
		t.Errorf("a file gone: %v, want evidence_integrity_mismatch", err)
	}
}
