package library

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
	"github.com/gatehouse/gatehouse/backend/store"
)

// TestSaveSealedSavesOnlyWhatVerifies, from the attacker's side: the file
// saveSealed writes while it checks is saved under its name and indexed
// only when the sealed bytes verify as the id asked for. A record that
// does not verify (whatever a check ahead on other bytes said), or an id
// that is not the sealed one, leaves nothing behind: no file of either
// id, no temporary file, no index entry, no mark. What is saved is the
// bytes checked, and a change of the caller's slice once it returned
// changes nothing.
func TestSaveSealedSavesOnlyWhatVerifies(t *testing.T) {
	ctx := context.Background()
	good, bad := pinnedRecords(t)
	goodOut, _, goodID := sealRecord(t, good)
	for _, c := range []struct {
		name        string
		ahead, seal []byte
		want        string // "" is the sealed id
		ok          bool
	}{
		{"good", good, good, "", true},
		{"good, checked here", nil, good, "", true},
		{"bad", bad, bad, "", false},
		{"good ahead, bad sealed", good, bad, "", false},
		{"bad, checked here", nil, bad, "", false},
		{"good under another id", good, good, "ev_" + string(bytes.Repeat([]byte("0"), 64)), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, db, dir := newTestLibrary(t)
			out, parsed, id := sealRecord(t, c.seal)
			want := id
			if c.want != "" {
				want = c.want
			}
			var ahead *RecordCheck
			if c.ahead != nil {
				ahead = CheckRecordAhead(c.ahead)
			}
			data := bytes.Clone(out)
			e, checked, err := l.saveSealed(ctx, store.EvidenceEntry{PredicateType: parsed.PredicateType, Operation: parsed.Operation, Summary: json.RawMessage(`{}`)}, data, parsed, want, ahead)
			files, _ := filepath.Glob(filepath.Join(dir, "evidence", "*")) // "*" matches names starting with a dot too
			if !c.ok {
				if le, ok := AsError(err); !ok || le.Code != "evidence_integrity_mismatch" {
					t.Fatalf("error %v, want evidence_integrity_mismatch", err)
				}
				if len(files) != 0 {
					t.Fatalf("files left behind: %v", files)
				}
				for _, i := range []string{id, want} {
					if _, err := l.Find(ctx, i); err == nil {
						t.Fatalf("%s is indexed", i)
					}
					if _, ok := l.ReadMark(ctx, i); ok {
						t.Fatalf("%s is marked verified", i)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			copy(data, bytes.Repeat([]byte{'x'}, len(data))) // the caller's slice, after the save
			if e.EvidenceID != goodID || e.Path != FilePath(dir, goodID) || checked.Result().EvidenceID != goodID {
				t.Fatalf("saved %+v, checked %s, want %s", e, checked.Result().EvidenceID, goodID)
			}
			if len(files) != 1 || files[0] != e.Path {
				t.Fatalf("files %v, want only %s", files, e.Path)
			}
			if got, _ := os.ReadFile(e.Path); !bytes.Equal(got, goodOut) {
				t.Fatal("the saved file is not the sealed bytes")
			}
			if got, err := db.GetEvidence(ctx, goodID); err != nil || got.Size != int64(len(goodOut)) {
				t.Fatalf("index entry %+v, %v", got, err)
			}
			if o, err := l.Open(ctx, goodID); err != nil || !bytes.Equal(o.Data, goodOut) {
				t.Fatalf("open: %v", err)
			}
		})
	}
}

// TestSealAndSaveSavesOnlyWhatVerifies, from the attacker's side: the file
// SealAndSave starts writing as soon as the seal has written the bytes is
// saved under its name and indexed only when both the seal's own check
// and the check for saving pass. An envelope the seal's check refuses
// (written, then refused), a record that does not verify (whatever a
// check ahead on other bytes said) leave nothing behind: no file, no
// temporary file, no index entry, no mark.
func TestSealAndSaveSavesOnlyWhatVerifies(t *testing.T) {
	ctx := context.Background()
	good, bad := pinnedRecords(t)
	goodOut, _, goodID := sealRecord(t, good)
	for _, c := range []struct {
		name        string
		ahead, seal []byte
		change      func(*evidence.Envelope)
		code        string // "" saves
	}{
		{"good", good, good, nil, ""},
		{"good, checked here", nil, good, nil, ""},
		{"bad", bad, bad, nil, "evidence_integrity_mismatch"},
		{"good ahead, bad sealed", good, bad, nil, "evidence_integrity_mismatch"},
		{"refused by the seal's check", good, good, func(e *evidence.Envelope) { e.SchemaVersion = 3 }, "evidence_not_sealed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, db, dir := newTestLibrary(t)
			ev := recordEnvelope(t, c.seal)
			if c.change != nil {
				c.change(ev)
			}
			var ahead *RecordCheck
			if c.ahead != nil {
				ahead = CheckRecordAhead(c.ahead)
			}
			e, out, err := l.SealAndSave(ctx, store.EvidenceEntry{PredicateType: ev.PredicateType, Operation: ev.Operation, Summary: json.RawMessage(`{}`)}, ev, ahead)
			files, _ := filepath.Glob(filepath.Join(dir, "evidence", "*")) // "*" matches names starting with a dot too
			if c.code != "" {
				if le, ok := AsError(err); !ok || le.Code != c.code {
					t.Fatalf("error %v, want %s", err, c.code)
				}
				if len(files) != 0 {
					t.Fatalf("files left behind: %v", files)
				}
				if n, err := db.ListEvidence(ctx, 100); err != nil || len(n) != 0 {
					t.Fatalf("index entries %v, %v", n, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.EvidenceID != goodID || !bytes.Equal(out, goodOut) || len(files) != 1 || files[0] != e.Path {
				t.Fatalf("saved %+v, files %v", e, files)
			}
			if got, _ := os.ReadFile(e.Path); !bytes.Equal(got, goodOut) {
				t.Fatal("the saved file is not the sealed bytes")
			}
			sum := sha256.Sum256(goodOut)
			if m, ok := l.ReadMark(ctx, goodID); !ok || m.SHA256 != hex.EncodeToString(sum[:]) {
				t.Fatalf("verification mark %+v, want one of the saved bytes' digest", m)
			}
		})
	}
}
