package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/library"
	"github.com/gatehouse/gatehouse/backend/store"
)

// wantMarked fails unless the saved file of id is marked verified by this
// executable for its exact bytes on disk, with the record checked when it
// is a process capture.
func wantMarked(t *testing.T, env *Env, id string) {
	t.Helper()
	data, err := os.ReadFile(library.FilePath(env.DataDir, id))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	raw, err := env.DB.Get(context.Background(), library.MarkNamespace, id)
	if err != nil {
		t.Fatalf("%s is not marked verified at save: %v", id, err)
	}
	var m library.Mark
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	isCapture := m.Result.PredicateType == evidence.PredicateProcessCapture
	if m.SHA256 != hex.EncodeToString(sum[:]) || m.Verifier == "" || m.Verifier != env.verifier.ID() || m.Result.EvidenceID != id ||
		!m.Result.Valid || m.Result.RecordVerified != isCapture {
		t.Errorf("mark of %s: %+v", id, m)
	}
}

// A capture made by the CLI (`gatehouse capture-process`) is marked
// verified when it is saved, so the app opens it with one hash.
func TestCLICaptureIsMarkedVerifiedAtSave(t *testing.T) {
	work := t.TempDir()
	env := captureEnv(t, work)
	r := cli(t, env, "capture-process", writeScenario(t, work, "echo marked at save", nil))
	if r.status != 0 {
		t.Fatalf("capture-process: %d %s", r.status, r.stderr)
	}
	var ev evidence.Envelope
	if err := json.Unmarshal([]byte(r.stdout), &ev); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(filepath.Join(env["GATEHOUSE_DATA_DIR"], store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	wantMarked(t, &Env{IO: IO{Stderr: os.Stderr}, DataDir: env["GATEHOUSE_DATA_DIR"], DB: db}, ev.EvidenceID)
}

// Every other save path (the capture the app and agents share, an
// Evidence import, an asciicast import, a saved comparison) marks the file
// at save; the mark spares nothing for other bytes: a file changed after
// the save is refused when it is opened, after a restart too.
func TestEverySaveMarksVerifiedAndChangedBytesAreRefused(t *testing.T) {
	ts := startServer(t)
	f := ts.facade
	ev, out := facadeCapture(t, ts, "echo 'saved <once>'")
	wantMarked(t, f.env, ev.EvidenceID)

	work := t.TempDir()
	alpha, bravo := cmpCapture(t, ts, work, "alpha"), cmpCapture(t, ts, work, "bravo")
	v, status, e := apiCall[ComparisonView](t, ts, "CompareCaptures", map[string]any{"left": alpha, "right": bravo, "save": true, "mode": "exact"})
	if status != 200 || v.EvidenceID == "" {
		t.Fatalf("CompareCaptures: %d %+v", status, e)
	}
	wantMarked(t, f.env, v.EvidenceID)
	ex, status, e := apiCall[ExportAsciicastResult](t, ts, "ExportAsciicast", map[string]any{"id": alpha})
	if status != 200 {
		t.Fatalf("export: %d %+v", status, e)
	}
	im, status, e := apiCall[ImportAsciicastResult](t, ts, "ImportAsciicast", map[string]any{"name": "alpha.cast", "text": ex.Text})
	if status != 200 {
		t.Fatalf("asciicast import: %d %+v", status, e)
	}
	wantMarked(t, f.env, im.EvidenceID)
	if _, status, e := apiCall[DeleteEvidenceResult](t, ts, "DeleteEvidence", DeleteEvidenceArgs{ID: ev.EvidenceID}); status != 200 {
		t.Fatalf("delete: %d %+v", status, e)
	}
	if _, status, e := apiCall[ImportEvidenceResult](t, ts, "ImportEvidence", ImportEvidenceArgs{Name: "c.json", Data: out}); status != 200 {
		t.Fatalf("import: %d %+v", status, e)
	}
	wantMarked(t, f.env, ev.EvidenceID)

	// The attacker changes the saved bytes after the save; the mark stays.
	tampered := bytes.Replace(out, []byte("saved <once>"), []byte("saved <ONCE>"), 1)
	if bytes.Equal(tampered, out) {
		t.Fatal("nothing tampered")
	}
	if err := os.WriteFile(library.FilePath(f.env.DataDir, ev.EvidenceID), tampered, 0o600); err != nil {
		t.Fatal(err)
	}
	restartLibrary(f.env) // as after a restart
	if _, status, e := apiCall[GetEvidenceResult](t, ts, "GetEvidence", GetEvidenceArgs{ID: ev.EvidenceID}); status != 400 || e.Code != "evidence_integrity_mismatch" {
		t.Errorf("bytes changed after the save opened: %d %+v", status, e)
	}
}

// Nothing enters the library without a full check: bytes that do not
// verify (here a record changed after sealing, so its evidence_id no
// longer matches) are refused with every failing path and nothing is
// written or indexed.
func TestSaveRefusesBytesThatDoNotVerify(t *testing.T) {
	ts := startServer(t)
	f := ts.facade
	ev, out := facadeCapture(t, ts, "echo 'checked <first>'")
	if _, status, e := apiCall[DeleteEvidenceResult](t, ts, "DeleteEvidence", DeleteEvidenceArgs{ID: ev.EvidenceID}); status != 200 {
		t.Fatalf("delete: %d %+v", status, e)
	}
	tampered := bytes.Replace(out, []byte("checked <first>"), []byte("checked <FIRST>"), 1)
	_, err := library.CheckForSave(tampered, ev.EvidenceID)
	err = libError(err)
	if codeOf(err) != "evidence_integrity_mismatch" {
		t.Fatalf("unverifiable bytes: %v", err)
	}
	if _, err := f.env.lib().Save(f.ctx, store.EvidenceEntry{}, library.Checked{}); err == nil {
		t.Error("unchecked Evidence was saved")
	}
	if _, err := os.Stat(library.FilePath(f.env.DataDir, ev.EvidenceID)); !os.IsNotExist(err) {
		t.Errorf("a refused save left a file: %v", err)
	}
	if _, err := f.env.lib().Find(f.ctx, ev.EvidenceID); codeOf(libError(err)) != "evidence_not_found" {
		t.Errorf("a refused save was indexed: %v", err)
	}
}

// A capture's seal stands for the envelope half of the check at save;
// the record half still runs: a record that breaks its own commitments
// is refused even when its envelope parsed.
func TestSaveOfSealedCaptureChecksItsRecord(t *testing.T) {
	ts := startServer(t)
	ev, out := facadeCapture(t, ts, "echo 'record <checked>'")
	parsed, issues := evidence.Parse(out)
	if len(issues) > 0 {
		t.Fatal(issues)
	}
	if _, err := library.CheckParsedForSave(out, parsed, ev.EvidenceID); err != nil {
		t.Fatalf("a good capture: %v", err)
	}
	parsed.NormalizedResult = bytes.Replace(parsed.NormalizedResult, []byte("record <checked>"), []byte("record <CHECKED>"), 1)
	_, err := library.CheckParsedForSave(out, parsed, ev.EvidenceID)
	err = libError(err)
	if codeOf(err) != "evidence_integrity_mismatch" {
		t.Fatalf("a record that breaks its commitments: %v", err)
	}
	if _, err := library.CheckParsedForSave(out, nil, ev.EvidenceID); err == nil {
		t.Error("no parse, yet checked")
	}
}
