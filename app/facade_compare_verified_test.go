package app

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// A comparison reads each capture through the library, which verifies the
// bytes it reads: a file changed after it was saved and compared (its
// record's proof kept in memory) is refused, never compared as the record
// that was verified. Checked to fail with cmpLoadCapture taking the proof
// kept for the id's first read instead of opening the file again.
func TestCompareRefusesACaptureChangedAfterItsSave(t *testing.T) {
	ts := startServer(t)
	work := t.TempDir()
	alpha, bravo := cmpCapture(t, ts, work, "alpha"), cmpCapture(t, ts, work, "bravo")
	args := map[string]any{"left": alpha, "right": bravo, "mode": "exact"}
	if _, status, e := apiCall[ComparisonView](t, ts, "CompareCaptures", args); status != 200 {
		t.Fatalf("CompareCaptures: %d %+v", status, e)
	}
	path := filepath.Join(ts.facade.env.DataDir, "evidence", alpha+".json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	changed := bytes.Replace(data, []byte("alpha"), []byte("alphA"), 1)
	if bytes.Equal(changed, data) {
		t.Fatal("nothing to change")
	}
	if err := os.WriteFile(path, changed, 0o600); err != nil {
		t.Fatal(err)
	}
	_, status, e := apiCall[ComparisonView](t, ts, "CompareCaptures", args)
	if status != 400 || e.Code != "evidence_integrity_mismatch" {
		t.Fatalf("a changed capture: %d %+v", status, e)
	}
	_, status, e = apiCall[DimensionRow](t, ts, "CompareDiffPage", map[string]any{"left": alpha, "right": bravo, "dimension": "terminal"})
	if status != 400 || e.Code != "evidence_integrity_mismatch" {
		t.Fatalf("a changed capture's diff page: %d %+v", status, e)
	}
}
