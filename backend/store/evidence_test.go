package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestEvidenceIndex(t *testing.T) {
	ctx := context.Background()
	db, path := openTemp(t)
	id := "ev_" + strings.Repeat("a", 64)
	e := EvidenceEntry{EvidenceID: id, PredicateType: "gatehouse.process-capture/v4", Operation: "capture_process_scenario",
		Path: "/d/evidence/" + id + ".json", Size: 10, Summary: json.RawMessage(`{"exit":3}`), CreatedAt: time.Unix(100, 0)}
	if err := db.IndexEvidence(ctx, e); err != nil {
		t.Fatal(err)
	}
	if err := db.IndexEvidence(ctx, e); err != nil { // same content again
		t.Fatal(err)
	}
	bad := e
	bad.EvidenceID = "ev_short"
	if err := db.IndexEvidence(ctx, bad); err == nil {
		t.Fatal("malformed id indexed")
	}
	bad = e
	bad.Summary = json.RawMessage(`{`)
	if err := db.IndexEvidence(ctx, bad); err == nil {
		t.Fatal("invalid summary indexed")
	}
	db.Close()
	db, _ = Open(path)
	defer db.Close()
	list, err := db.ListEvidence(ctx, 10)
	if err != nil || len(list) != 1 || list[0].EvidenceID != id || string(list[0].Summary) != `{"exit":3}` {
		t.Fatalf("%+v %v", list, err)
	}
	db.DeleteEvidence(ctx, id)
	if list, _ := db.ListEvidence(ctx, 10); len(list) != 0 {
		t.Fatal("entry survived delete")
	}
}

// TestEvidenceSharing shares an entry with agents and stops again; an
// unknown id changes nothing, and indexing the same Evidence again keeps
// the person's choice.
func TestEvidenceSharing(t *testing.T) {
	ctx := context.Background()
	db, path := openTemp(t)
	mk := func(c byte, at int64) EvidenceEntry {
		id := "ev_" + strings.Repeat(string(c), 64)
		return EvidenceEntry{EvidenceID: id, PredicateType: "p", Operation: "o", Path: "/e/" + id, Size: 1,
			Summary: json.RawMessage(`{}`), CreatedAt: time.Unix(at, 0)}
	}
	a, b := mk('a', 1), mk('b', 2)
	for _, e := range []EvidenceEntry{a, b} {
		if err := db.IndexEvidence(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := db.GetEvidence(ctx, a.EvidenceID); err != nil || got.Shared || got.Path != a.Path {
		t.Fatalf("new entry %+v %v", got, err)
	}
	if err := db.SetEvidenceShared(ctx, a.EvidenceID, true); err != nil {
		t.Fatal(err)
	}
	if err := db.SetEvidenceShared(ctx, "ev_"+strings.Repeat("c", 64), true); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	if _, err := db.GetEvidence(ctx, "ev_"+strings.Repeat("c", 64)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	if err := db.IndexEvidence(ctx, a); err != nil { // saved again: still shared
		t.Fatal(err)
	}
	db.Close()
	db, _ = Open(path)
	defer db.Close()
	shared, err := db.ListSharedEvidence(ctx, 10)
	if err != nil || len(shared) != 1 || shared[0].EvidenceID != a.EvidenceID || !shared[0].Shared {
		t.Fatalf("shared %+v %v", shared, err)
	}
	if all, _ := db.ListEvidence(ctx, 10); len(all) != 2 || all[0].Shared || !all[1].Shared {
		t.Fatalf("list %+v", all)
	}
	if err := db.SetEvidenceShared(ctx, a.EvidenceID, false); err != nil {
		t.Fatal(err)
	}
	if shared, _ := db.ListSharedEvidence(ctx, 10); len(shared) != 0 {
		t.Fatalf("still shared: %+v", shared)
	}
}
