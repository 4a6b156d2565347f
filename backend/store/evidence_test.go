package store

import (
	"context"
	"encoding/json"
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
