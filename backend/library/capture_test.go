package library

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/store"
)

func readExample(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "examples", "evidence-envelope", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// OpenCapture hands out the proof of the record it read: the one its save
// made, and after a restart (the file accepted by its mark) one it makes
// then, for the record of the envelope it returns.
func TestOpenCaptureHandsOutTheProof(t *testing.T) {
	l, db, dir := newTestLibrary(t)
	ctx := context.Background()
	e := save(t, l, readExample(t, "valid-capture-printf.json"))
	oc, err := l.OpenCapture(ctx, e.EvidenceID)
	if err != nil {
		t.Fatal(err)
	}
	if oc.Envelope.EvidenceID != e.EvidenceID || !oc.Record.Valid() || !oc.Record.Holds(oc.Envelope.NormalizedResult) {
		t.Fatalf("open: id %s, proof valid %v", oc.Envelope.EvidenceID, oc.Record.Valid())
	}
	if _, ok := l.proofs.Get(oc.Sum); !ok {
		t.Error("the proof made at save is not kept")
	}
	restarted := New(Config{DB: db, DataDir: dir, Verifier: func() string { return "test-verifier" }})
	oc2, err := restarted.OpenCapture(ctx, e.EvidenceID)
	if err != nil || !oc2.Record.Holds(oc2.Envelope.NormalizedResult) {
		t.Fatalf("after a restart: %v", err)
	}
	if _, ok := restarted.proofs.Get(oc2.Sum); !ok {
		t.Error("the proof made on open is not kept")
	}
	cmp := save(t, l, sealedComparison(t, "not a capture"))
	if _, err := l.OpenCapture(ctx, cmp.EvidenceID); codeOf(err) != "not_a_capture" {
		t.Errorf("a comparison: %v", err)
	}
}

// A verification mark lets Open skip the record check, but never makes a
// proof: bytes whose envelope is sound and whose record breaks an
// invariant, under a mark of this verifier (a forged one, or one of an
// older verifier that accepted them), are refused by OpenCapture. A proof
// can only come from record.Check (record.Verified has no other
// constructor), which this test shows refuses the record.
func TestOpenCaptureRefusesAMarkedBrokenRecord(t *testing.T) {
	l, db, dir := newTestLibrary(t)
	ctx := context.Background()
	data := readExample(t, "broken-commitment_mismatch.json")
	env, issues := evidence.Parse(data)
	if len(issues) > 0 {
		t.Fatalf("the envelope itself is broken: %v", issues)
	}
	id := env.EvidenceID
	if err := os.MkdirAll(filepath.Join(dir, "evidence"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(FilePath(dir, id), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := db.IndexEvidence(ctx, store.EvidenceEntry{EvidenceID: id, PredicateType: env.PredicateType, Operation: env.Operation,
		Summary: json.RawMessage(`{}`), Path: FilePath(dir, id), Size: int64(len(data))}); err != nil {
		t.Fatal(err)
	}
	res := Result{Valid: true, EvidenceID: id, PredicateType: env.PredicateType, RecordVerified: true}
	l.MarkVerified(ctx, sum256(data), res)
	if _, err := l.Open(ctx, id); err != nil {
		t.Fatalf("the mark is trusted by Open (the documented boundary): %v", err)
	}
	if _, err := l.OpenCapture(ctx, id); codeOf(err) != "evidence_integrity_mismatch" {
		t.Fatalf("a marked broken record: %v", err)
	}
}
