package approvals

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testfs"

	"github.com/gatehouse/gatehouse/backend/artifact"
	"github.com/gatehouse/gatehouse/backend/store"
)

func openDB(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// snapshot captures a bundle folder holding files plus SKILL.md and
// execution.json.
func snapshot(t *testing.T, files map[string]string) *artifact.Snapshot {
	t.Helper()
	dir := t.TempDir()
	all := map[string]string{artifact.SkillFile: "---\nname: x\ndescription: d\n---\n", artifact.ManifestFile: "{}"}
	var declared []string
	for k, v := range files {
		all[k] = v
		if k != artifact.SkillFile && k != artifact.ManifestFile {
			declared = append(declared, k)
		}
	}
	testfs.WriteTree(t, dir, all)
	s, err := artifact.Capture(dir, declared)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewSameChanged(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	b := Open(openDB(t), func() time.Time { return at })
	v1 := snapshot(t, map[string]string{"scripts/run.mjs": "console.log(1)\n", "assets/a.txt": "a"})

	c, err := b.Compare(ctx, "demo", v1)
	if err != nil || c.Status != New {
		t.Fatalf("before any approval: %+v, %v; want new", c, err)
	}
	if err := b.Record(ctx, "demo", v1); err != nil {
		t.Fatal(err)
	}
	c, err = b.Compare(ctx, "demo", v1)
	if err != nil || c.Status != Same || !c.ApprovedAt.Equal(at) || c.ApprovedRevision != v1.Revision() {
		t.Fatalf("same revision: %+v, %v", c, err)
	}
	// Another skill's approval says nothing about this one.
	if c, _ := b.Compare(ctx, "other", v1); c.Status != New {
		t.Fatalf("other skill: %+v", c)
	}

	v2 := snapshot(t, map[string]string{"scripts/run.mjs": "console.log(2)\n", "assets/b.txt": "b"})
	c, err = b.Compare(ctx, "demo", v2)
	if err != nil || c.Status != Changed || c.ApprovedRevision != v1.Revision() {
		t.Fatalf("changed: %+v, %v", c, err)
	}
	want := []Change{{"assets/a.txt", Removed}, {"assets/b.txt", Added}, {"scripts/run.mjs", Modified}}
	if len(c.Changes) != len(want) {
		t.Fatalf("changes %+v, want %+v", c.Changes, want)
	}
	for i := range want {
		if c.Changes[i] != want[i] {
			t.Fatalf("changes %+v, want %+v", c.Changes, want)
		}
	}
	old, ok, kept := c.Before("scripts/run.mjs")
	if !ok || !kept || string(old) != "console.log(1)\n" {
		t.Fatalf("before bytes %q %v %v", old, ok, kept)
	}
	if _, ok, _ := c.Before("assets/b.txt"); ok {
		t.Fatal("an added file has no earlier bytes")
	}

	// Approving v2 makes it the base; v1 is still "same" (by hash, its
	// bytes no longer kept).
	at = at.Add(time.Hour)
	if err := b.Record(ctx, "demo", v2); err != nil {
		t.Fatal(err)
	}
	if c, _ := b.Compare(ctx, "demo", v2); c.Status != Same || !c.ApprovedAt.Equal(at) {
		t.Fatalf("v2 after approval: %+v", c)
	}
	c, _ = b.Compare(ctx, "demo", v1)
	if c.Status != Same || !c.ApprovedAt.Equal(at.Add(-time.Hour)) {
		t.Fatalf("v1 after v2: %+v", c)
	}
	if _, ok, kept := c.Before("scripts/run.mjs"); !ok || kept {
		t.Fatalf("older entry keeps hashes only: ok=%v kept=%v", ok, kept)
	}
}

// The kept bytes stop at MaxKeptBytes (the file that would pass it is
// remembered by hash only) and the entries at MaxRevisions.
func TestBounds(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	b := Open(db, nil)
	// In path order SKILL.md and a.txt fill the budget exactly; b.txt is one past it.
	exact := strings.Repeat("x", MaxKeptBytes-len("---\nname: x\ndescription: d\n---\n"))
	s := snapshot(t, map[string]string{"a.txt": exact, "b.txt": "y"})
	if err := b.Record(ctx, "big", s); err != nil {
		t.Fatal(err)
	}
	c, _ := b.Compare(ctx, "big", snapshot(t, map[string]string{"a.txt": exact + "!", "b.txt": "y!"}))
	if _, ok, kept := c.Before("a.txt"); !ok || !kept {
		t.Fatalf("a file that fills the budget exactly is kept: ok=%v kept=%v", ok, kept)
	}
	if _, ok, kept := c.Before("b.txt"); !ok || kept {
		t.Fatalf("one byte past the budget is not kept: ok=%v kept=%v", ok, kept)
	}
	for i := 0; i < MaxRevisions+3; i++ {
		if err := b.Record(ctx, "many", snapshot(t, map[string]string{"n.txt": strings.Repeat("n", i+1)})); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := db.Get(ctx, Namespace, "many")
	if err != nil {
		t.Fatal(err)
	}
	r, err := load(raw)
	if err != nil || len(r.Revisions) != MaxRevisions {
		t.Fatalf("%d entries kept, want %d (%v)", len(r.Revisions), MaxRevisions, err)
	}
}

// An unreadable stored history is an error for Compare (the dialog says
// it cannot tell), never a "new skill".
func TestCorruptHistory(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	if err := db.Put(ctx, Namespace, "demo", []byte(`{"revisions":"nope"}`)); err != nil {
		t.Fatal(err)
	}
	b := Open(db, nil)
	s := snapshot(t, map[string]string{"a.txt": "a"})
	if c, err := b.Compare(ctx, "demo", s); err == nil {
		t.Fatalf("corrupt history compared as %+v", c)
	}
	if err := b.Record(ctx, "demo", s); err != nil {
		t.Fatal(err)
	}
	if c, err := b.Compare(ctx, "demo", s); err != nil || c.Status != Same {
		t.Fatalf("after a new approval: %+v %v", c, err)
	}
}

// Approvals recorded at once (two windows, the terminal) are all kept:
// the store's transaction serializes the read-modify-write.
func TestConcurrentRecordsLoseNothing(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	b := Open(db, nil)
	snaps := make([]*artifact.Snapshot, MaxRevisions)
	for i := range snaps {
		snaps[i] = snapshot(t, map[string]string{"n.txt": strings.Repeat("c", i+1)})
	}
	errs := make(chan error, len(snaps))
	for _, s := range snaps {
		go func(s *artifact.Snapshot) { errs <- b.Record(ctx, "busy", s) }(s)
	}
	for range snaps {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range snaps {
		if c, err := b.Compare(ctx, "busy", s); err != nil || c.Status != Same {
			t.Fatalf("revision %d: %+v %v", i, c, err)
		}
	}
}
