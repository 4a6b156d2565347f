package library

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/store"
)

// overwrite changes every byte of data in place, as a caller reusing its
// buffer would: the same length, another Evidence.
func overwrite(data, with []byte) {
	if len(with) != len(data) {
		panic("overwrite: lengths differ")
	}
	copy(data, with)
}

// TestCheckedOwnsItsBytes: once Check, CheckForSave or CheckParsedForSave
// returned, a caller that overwrites its slice (with another valid
// Evidence of the same length, the hardest case) changes neither what
// Save writes, nor the mark, nor (for Check) the parsed envelope: the
// file holds the bytes that passed, and opening it verifies them.
func TestCheckedOwnsItsBytes(t *testing.T) {
	ctx := context.Background()
	checks := map[string]func(t *testing.T, data []byte) Checked{
		"Check": func(t *testing.T, data []byte) Checked {
			c, issues := Check(data)
			if len(issues) > 0 {
				t.Fatal(issues)
			}
			return c
		},
		"CheckForSave": func(t *testing.T, data []byte) Checked {
			env, _ := evidence.Parse(data)
			c, err := CheckForSave(data, env.EvidenceID)
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
		"CheckParsedForSave": func(t *testing.T, data []byte) Checked {
			env, issues := evidence.Parse(data)
			if len(issues) > 0 {
				t.Fatal(issues)
			}
			c, err := CheckParsedForSave(data, env, env.EvidenceID)
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
	}
	for name, check := range checks {
		t.Run(name, func(t *testing.T) {
			l, _, dir := newTestLibrary(t)
			checked, other := sealedComparison(t, "checked"), sealedComparison(t, "another")
			buf := bytes.Clone(checked)
			c := check(t, buf)
			id, op := c.Result().EvidenceID, c.Envelope().Operation
			overwrite(buf, other) // after the call, before the save
			if name == "Check" {
				var note struct{ Note string }
				if json.Unmarshal(c.Envelope().NormalizedResult, &note); note.Note != "checked" {
					t.Errorf("the checked envelope changed with the caller's slice: %q", note.Note)
				}
			}
			e, err := l.Save(ctx, store.EvidenceEntry{PredicateType: c.Result().PredicateType, Operation: op, Summary: json.RawMessage(`{}`)}, c)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(FilePath(dir, e.EvidenceID)); e.EvidenceID != id || !bytes.Equal(got, checked) {
				t.Fatalf("saved %s holds %q, want the checked bytes", e.EvidenceID, got)
			}
			if o, err := l.Open(ctx, id); err != nil || !bytes.Equal(o.Data, checked) {
				t.Fatalf("open: %v", err)
			}
		})
	}
}
