package library

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/backend/store"
)

// TestPreverifyChecksIndexIDs: an index row whose id is not an evidence
// id ("../xxx…", 67 characters as the index's CHECK wants, as a damaged
// or foreign index may hold) does not make
// the background sweep read and verify a file outside the library's
// evidence directory, while a genuine unmarked file of the same list is
// still verified and marked.
func TestPreverifyChecksIndexIDs(t *testing.T) {
	l, db, dir := newTestLibrary(t)
	ctx := context.Background()
	genuine := save(t, l, sealedComparison(t, "genuine"))
	if err := l.ForgetMark(ctx, genuine.EvidenceID); err != nil {
		t.Fatal(err)
	}
	outside := sealedComparison(t, "outside") // valid Evidence, where no library file is
	bad := "../" + strings.Repeat("x", 64)
	outsidePath := filepath.Join(dir, strings.Repeat("x", 64)+".json")
	if err := os.WriteFile(outsidePath, outside, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := l.Path(bad); got != outsidePath {
		t.Fatalf("the test's id reaches %s", got)
	}
	if err := db.IndexEvidence(ctx, store.EvidenceEntry{EvidenceID: bad, PredicateType: "x", Operation: "x", Path: "x", Summary: json.RawMessage(`{}`), CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	list, err := l.List(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range list {
		ids = append(ids, e.EvidenceID)
	}
	if len(ids) != 2 {
		t.Fatalf("index %v", ids)
	}
	l.Preverify(ctx, ids)
	l.Wait()
	if _, ok := l.verified.Get(sha256.Sum256(outside)); ok {
		t.Errorf("the sweep read and verified %s through the index id %q", outsidePath, bad)
	}
	if m, ok := l.ReadMark(ctx, genuine.EvidenceID); !ok || m.Verifier != "test-verifier" {
		t.Errorf("the genuine file was not verified and marked: %+v %v", m, ok)
	}
	if _, ok := l.ReadMark(ctx, bad); ok {
		t.Errorf("a mark was written for %q", bad)
	}
}
