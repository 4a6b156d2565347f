package library

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/store"
)

// newTestLibrary is a library over a real SQLite store in a fresh data
// directory, with a fixed clock and a verifier digest of "test-verifier".
func newTestLibrary(t *testing.T) (*Library, *store.DB, string) {
	t.Helper()
	dir := t.TempDir()
	db, err := store.Open(filepath.Join(dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	l := New(Config{DB: db, DataDir: dir, Verifier: func() string { return "test-verifier" },
		Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }})
	return l, db, dir
}

// sealedComparison is the JSON of a sealed comparison Evidence whose
// result carries note (so two notes make two different files).
func sealedComparison(t *testing.T, note string) []byte {
	t.Helper()
	left, right := "ev_"+strings.Repeat("1", 64), "ev_"+strings.Repeat("2", 64)
	e := &evidence.Envelope{
		Provider:         evidence.Provider{ID: evidence.ProcessProviderID, Name: "Gatehouse Process Capture", Version: "4"},
		PredicateType:    evidence.PredicateProcessComparison,
		Operation:        evidence.OperationCompareProcesses,
		Parameters:       json.RawMessage(`{"left_evidence_id":"` + left + `","right_evidence_id":"` + right + `"}`),
		NormalizedResult: json.RawMessage(`{"status":"unchanged","first_divergence":{"status":"none"},"limitations":[],"note":"` + note + `"}`),
		Confidence:       evidence.Derived,
		Authority:        evidence.AuthorityAnalystInference,
		EvidenceLinks:    []string{left, right},
	}
	data, err := evidence.SealJSON(e)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func codeOf(err error) string {
	if e, ok := AsError(err); ok {
		return e.Code
	}
	return ""
}

func save(t *testing.T, l *Library, data []byte) store.EvidenceEntry {
	t.Helper()
	c, issues := Check(data)
	if len(issues) > 0 {
		t.Fatalf("check: %v", issues)
	}
	e, err := l.Save(context.Background(), store.EvidenceEntry{PredicateType: c.Result().PredicateType, Operation: c.Envelope().Operation, Summary: json.RawMessage(`{}`)}, c)
	if err != nil {
		t.Fatalf("save: %v", err)
	}
	return e
}

// A save writes the exact bytes checked, indexes them at the clock's time
// and marks them verified by the verifier; Open returns them verified.
func TestSaveIndexesMarksAndOpens(t *testing.T) {
	l, _, dir := newTestLibrary(t)
	ctx := context.Background()
	data := sealedComparison(t, "saved")
	e := save(t, l, data)
	if got, _ := os.ReadFile(FilePath(dir, e.EvidenceID)); !bytes.Equal(got, data) || e.Path != FilePath(dir, e.EvidenceID) {
		t.Fatalf("the file is not the checked bytes at %s", e.Path)
	}
	if !e.CreatedAt.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) || e.Size != int64(len(data)) {
		t.Errorf("entry: %+v", e)
	}
	if m, ok := l.ReadMark(ctx, e.EvidenceID); !ok || m.Verifier != "test-verifier" || m.Result.EvidenceID != e.EvidenceID {
		t.Errorf("mark: %+v %v", m, ok)
	}
	o, err := l.Open(ctx, e.EvidenceID)
	if err != nil || !bytes.Equal(o.Data, data) || o.Result.EvidenceID != e.EvidenceID || o.Result.RecordVerified {
		t.Fatalf("open: %+v %v", o.Result, err)
	}
}

// Nothing unchecked is saved, and a save whose index cannot be written
// leaves no file behind.
func TestSaveRefusesUncheckedAndLeavesNothingHalfSaved(t *testing.T) {
	l, db, dir := newTestLibrary(t)
	if _, err := l.Save(context.Background(), store.EvidenceEntry{}, Checked{}); codeOf(err) != "internal" {
		t.Errorf("an unchecked save: %v", err)
	}
	data := sealedComparison(t, "half")
	c, issues := Check(data)
	if len(issues) > 0 {
		t.Fatal(issues)
	}
	db.Close() // the index cannot be written
	if _, err := l.Save(context.Background(), store.EvidenceEntry{PredicateType: c.Result().PredicateType, Summary: json.RawMessage(`{}`)}, c); codeOf(err) != "evidence_not_indexed" {
		t.Fatalf("a save that cannot be indexed: %v", err)
	}
	if _, err := os.Stat(FilePath(dir, c.Result().EvidenceID)); !os.IsNotExist(err) {
		t.Errorf("a save that was not indexed left its file: %v", err)
	}
}

// From the attacker's side: a saved file changed in one byte, or swapped
// for another saved (verified, marked, cached) file, is never opened,
// whatever its mark and the in-memory cache say.
func TestOpenRefusesChangedAndSwappedFiles(t *testing.T) {
	l, _, dir := newTestLibrary(t)
	ctx := context.Background()
	a, b := sealedComparison(t, "alpha"), sealedComparison(t, "bravo")
	ea, eb := save(t, l, a), save(t, l, b)
	for _, id := range []string{ea.EvidenceID, eb.EvidenceID} {
		if _, err := l.Open(ctx, id); err != nil {
			t.Fatalf("warm open: %v", err)
		}
	}
	os.WriteFile(FilePath(dir, ea.EvidenceID), b, 0o600)
	if _, err := l.Open(ctx, ea.EvidenceID); codeOf(err) != "evidence_integrity_mismatch" {
		t.Errorf("a swapped file opened: %v", err)
	}
	os.WriteFile(FilePath(dir, ea.EvidenceID), bytes.Replace(a, []byte("alpha"), []byte("alphA"), 1), 0o600)
	_, err := l.Open(ctx, ea.EvidenceID)
	if le, ok := AsError(err); !ok || le.Code != "evidence_integrity_mismatch" || le.Kind != KindInvalid || len(le.Issues) == 0 {
		t.Errorf("a changed file opened: %v", err)
	}
	os.Remove(FilePath(dir, eb.EvidenceID))
	if _, err := l.Open(ctx, eb.EvidenceID); codeOf(err) != "evidence_not_found" {
		t.Errorf("a missing file: %v", err)
	}
}

// Delete removes the file, the index entry and the mark; an unknown id
// is evidence_not_found and the hook that runs first is not called.
func TestDeleteRemovesFileEntryAndMark(t *testing.T) {
	l, _, dir := newTestLibrary(t)
	ctx := context.Background()
	e := save(t, l, sealedComparison(t, "gone"))
	called := false
	if err := l.Delete(ctx, e.EvidenceID, func() error { called = true; return nil }); err != nil || !called {
		t.Fatalf("delete: %v (hook called: %v)", err, called)
	}
	if _, err := os.Stat(FilePath(dir, e.EvidenceID)); !os.IsNotExist(err) {
		t.Error("the file outlived its deletion")
	}
	if _, ok := l.ReadMark(ctx, e.EvidenceID); ok {
		t.Error("the mark outlived its Evidence")
	}
	called = false
	if err := l.Delete(ctx, e.EvidenceID, func() error { called = true; return nil }); codeOf(err) != "evidence_not_found" || called {
		t.Errorf("a second delete: %v (hook called: %v)", err, called)
	}
}

// ReadBounded reads a file of exactly max bytes and refuses one of max+1.
func TestReadBoundedAtAndOnePast(t *testing.T) {
	dir := t.TempDir()
	at, past := filepath.Join(dir, "at"), filepath.Join(dir, "past")
	os.WriteFile(at, bytes.Repeat([]byte("x"), 64), 0o600)
	os.WriteFile(past, bytes.Repeat([]byte("x"), 65), 0o600)
	if b, err := ReadBounded(at, 64); err != nil || len(b) != 64 {
		t.Errorf("at the bound: %d %v", len(b), err)
	}
	if _, err := ReadBounded(past, 64); codeOf(err) != "evidence_integrity_mismatch" {
		t.Errorf("one past the bound: %v", err)
	}
}

// With no verifier digest (the executable cannot be read) no mark is
// written, so every later read is verified in full.
func TestNoVerifierNoMarks(t *testing.T) {
	dir := t.TempDir()
	db, err := store.Open(filepath.Join(dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l := New(Config{DB: db, DataDir: dir})
	e := save(t, l, sealedComparison(t, "unmarked"))
	if _, ok := l.ReadMark(context.Background(), e.EvidenceID); ok {
		t.Error("a mark was written without a verifier")
	}
}

// Import writes new Evidence with origin "imported" and its file name;
// the same Evidence again is present and not written; an entry whose
// file is gone is restored; an unchecked import is refused.
func TestImportPresentAndRestored(t *testing.T) {
	l, _, dir := newTestLibrary(t)
	ctx := context.Background()
	data := sealedComparison(t, "imported")
	c, issues := Check(data)
	if len(issues) > 0 {
		t.Fatal(issues)
	}
	e, present, err := l.Import(ctx, c, "c.json")
	if err != nil || present || OriginOf(e) != OriginImported || !bytes.Contains(e.Summary, []byte(`"file_name":"c.json"`)) {
		t.Fatalf("first import: %+v %v %v", e, present, err)
	}
	if _, present, err := l.Import(ctx, c, "again.json"); err != nil || !present {
		t.Errorf("the same Evidence again: present=%v %v", present, err)
	}
	os.Remove(FilePath(dir, e.EvidenceID))
	if _, present, err := l.Import(ctx, c, "c.json"); err != nil || present {
		t.Errorf("an entry whose file is gone: present=%v %v", present, err)
	}
	if got, _ := os.ReadFile(FilePath(dir, e.EvidenceID)); !bytes.Equal(got, data) {
		t.Error("the import did not restore the file")
	}
	if _, _, err := l.Import(ctx, Checked{}, "x"); codeOf(err) != "internal" {
		t.Errorf("an unchecked import: %v", err)
	}
	if OriginOf(store.EvidenceEntry{Summary: json.RawMessage(`{"command":"x"}`)}) != OriginCaptured {
		t.Error("an entry without an origin was made by Gatehouse")
	}
}

// From the attacker's side: a mark spares the full check only for the
// exact bytes it names, by this verifier. Changed bytes under the old
// mark, or under a mark forged with their digest but another verifier's
// name, are verified in full (after a restart, so no cache helps) and
// refused.
func TestMarkOnlyCoversItsBytesAndVerifier(t *testing.T) {
	l, db, dir := newTestLibrary(t)
	ctx := context.Background()
	data := sealedComparison(t, "marked")
	e := save(t, l, data)
	m, ok := l.ReadMark(ctx, e.EvidenceID)
	if !ok {
		t.Fatal("not marked at save")
	}
	changed := bytes.Replace(data, []byte("marked"), []byte("marKed"), 1)
	os.WriteFile(FilePath(dir, e.EvidenceID), changed, 0o600)
	restart := func() *Library {
		return New(Config{DB: db, DataDir: dir, Verifier: func() string { return "test-verifier" }})
	}
	if _, err := restart().Open(ctx, e.EvidenceID); codeOf(err) != "evidence_integrity_mismatch" {
		t.Errorf("changed bytes under the old mark: %v", err)
	}
	forged := m
	sum := sum256(changed)
	forged.SHA256, forged.Verifier = hexOf(sum), "another-build"
	b, _ := json.Marshal(forged)
	if err := db.Put(ctx, MarkNamespace, e.EvidenceID, b); err != nil {
		t.Fatal(err)
	}
	if _, err := restart().Open(ctx, e.EvidenceID); codeOf(err) != "evidence_integrity_mismatch" {
		t.Errorf("changed bytes under a mark of another verifier: %v", err)
	}
	// The same forged mark names this verifier: the store is trusted as
	// the policy is (MarkNamespace), so it is used; that is the documented
	// boundary, shown here so a change to it is seen.
	forged.Verifier = "test-verifier"
	b, _ = json.Marshal(forged)
	db.Put(ctx, MarkNamespace, e.EvidenceID, b)
	if _, err := restart().Open(ctx, e.EvidenceID); err != nil {
		t.Errorf("a mark of this verifier for these bytes is trusted: %v", err)
	}
}

func hexOf(sum [32]byte) string { return hex.EncodeToString(sum[:]) }

// From the attacker's side: an id that is not an evidence id (here one
// that climbs out of the folder) is refused by the library itself before
// any file is read or removed, whatever its callers checked.
func TestIDsOutsideTheFolderAreRefused(t *testing.T) {
	l, _, dir := newTestLibrary(t)
	ctx := context.Background()
	victim := filepath.Join(dir, "victim.json")
	os.WriteFile(victim, []byte("{}"), 0o600)
	bad := "../victim"
	if _, err := l.Open(ctx, bad); codeOf(err) != "invalid_arguments" {
		t.Errorf("open: %v", err)
	}
	if err := l.Delete(ctx, bad, nil); codeOf(err) != "invalid_arguments" {
		t.Errorf("delete: %v", err)
	}
	if _, err := l.SetShared(ctx, bad, true); codeOf(err) != "invalid_arguments" {
		t.Errorf("share: %v", err)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Errorf("a file outside the folder was touched: %v", err)
	}
}
