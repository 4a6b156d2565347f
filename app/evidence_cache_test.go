package app

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/gatehouse/gatehouse/backend/library"
)

// restartLibrary drops the evidence library of env with its in-memory
// cache, as after a restart; the next use makes a new one over the same
// store and data directory.
func restartLibrary(env *Env) {
	env.libMu.Lock()
	defer env.libMu.Unlock()
	env.evlib = nil
}

// A saved file's verification mark spares a full check only for the exact
// bytes it names, checked by this executable: a changed byte, a mark of
// another verifier or a mark for another id means a full verification,
// and a tampered file is still never returned.
func TestGetEvidenceVerificationMarks(t *testing.T) {
	ts := startServer(t)
	f := ts.facade
	ev, out := facadeCapture(t, ts, "echo 'hello <marks>'")
	id := ev.EvidenceID
	path := filepath.Join(f.env.DataDir, "evidence", id+".json")
	sum := sha256.Sum256(out)

	if _, status, e := apiCall[GetEvidenceResult](t, ts, "GetEvidence", GetEvidenceArgs{ID: id}); status != 200 {
		t.Fatalf("first read: %d %+v", status, e)
	}
	m, ok := f.env.lib().ReadMark(f.ctx, id)
	if !ok || m.SHA256 != hex.EncodeToString(sum[:]) || m.Verifier == "" || m.Verifier != f.env.verifier.ID() || !m.Result.RecordVerified {
		t.Fatalf("mark after a full verification: %+v %v", m, ok)
	}

	// readAfterRestart reads with the in-memory cache empty, as after a
	// restart, with the given mark stored (a marker result shows its use).
	readAfterRestart := func(mark library.Mark) (GetEvidenceResult, int, cliErr) {
		t.Helper()
		restartLibrary(f.env)
		b, _ := json.Marshal(mark)
		if err := f.env.DB.Put(f.ctx, library.MarkNamespace, id, b); err != nil {
			t.Fatal(err)
		}
		return apiCall[GetEvidenceResult](t, ts, "GetEvidence", GetEvidenceArgs{ID: id})
	}
	poked := m
	poked.Result.PredicateType = "from-the-mark"

	got, status, e := readAfterRestart(poked)
	if status != 200 || got.Verification.PredicateType != "from-the-mark" {
		t.Fatalf("the mark of the same bytes by the same verifier is used: %d %+v %+v", status, got.Verification, e)
	}
	other := poked
	other.Verifier = "0000"
	if got, status, e := readAfterRestart(other); status != 200 || got.Verification.PredicateType != ev.PredicateType {
		t.Errorf("a mark of another verifier must mean a full verification: %d %+v %+v", status, got.Verification, e)
	}

	// The attacker changes the saved file and leaves the mark in place.
	tampered := bytes.Replace(out, []byte("hello <marks>"), []byte("hello <MARKS>"), 1)
	if bytes.Equal(tampered, out) {
		t.Fatal("nothing tampered")
	}
	if err := os.WriteFile(path, tampered, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, status, e := readAfterRestart(poked); status != 400 || e.Code != "evidence_integrity_mismatch" || issuePaths(t, e)["$.evidence_id"] != "evidence_id_mismatch" {
		t.Errorf("tampered file under an old mark: %d %+v", status, e)
	}
	// ...and also forges the mark's digest, but not this executable's.
	forged := poked
	ts2 := sha256.Sum256(tampered)
	forged.SHA256, forged.Verifier = hex.EncodeToString(ts2[:]), "not-this-executable"
	if _, status, e := readAfterRestart(forged); status != 400 || e.Code != "evidence_integrity_mismatch" {
		t.Errorf("tampered file under a forged mark of another verifier: %d %+v", status, e)
	}

	// Deleting the Evidence removes its mark.
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, status, e := apiCall[DeleteEvidenceResult](t, ts, "DeleteEvidence", DeleteEvidenceArgs{ID: id}); status != 200 {
		t.Fatalf("delete: %d %+v", status, e)
	}
	if _, ok := f.env.lib().ReadMark(f.ctx, id); ok {
		t.Error("the mark outlives its Evidence")
	}

	// An import verified in full marks the file right away.
	if _, status, e := apiCall[ImportEvidenceResult](t, ts, "ImportEvidence", ImportEvidenceArgs{Name: "c.json", Data: out}); status != 200 {
		t.Fatalf("import: %d %+v", status, e)
	}
	if m, ok := f.env.lib().ReadMark(f.ctx, id); !ok || m.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("mark after import: %+v %v", m, ok)
	}
}

// The browser bridge writes the Evidence file's bytes as they are (no
// re-encoding): the response decodes to what encoding/json would give,
// and holds the file verbatim.
func TestGetEvidenceResponseCarriesTheFileBytes(t *testing.T) {
	ts := startServer(t)
	ev, out := facadeCapture(t, ts, "echo 'raw <bytes> & more'")
	got, err := ts.facade.GetEvidence(GetEvidenceArgs{ID: ev.EvidenceID})
	if err != nil {
		t.Fatal(err)
	}
	var mine bytes.Buffer
	if err := got.writeJSON(&mine); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(mine.Bytes(), out) {
		t.Error("the response does not hold the file's exact bytes")
	}
	std, _ := json.Marshal(got)
	var a, b any
	if err := json.Unmarshal(mine.Bytes(), &a); err != nil {
		t.Fatalf("the response is not JSON: %v", err)
	}
	json.Unmarshal(std, &b)
	if !reflect.DeepEqual(a, b) {
		t.Error("the response differs from encoding/json's")
	}
	// Over HTTP, as the page gets it.
	status, m := ts.do(t, req{method: "POST", path: "/api/GetEvidence", body: `{"id":"` + ev.EvidenceID + `"}`, origin: ts.origin(), token: ts.token})
	if status != 200 || !reflect.DeepEqual(any(m), b) {
		t.Errorf("HTTP response: %d", status)
	}
}

// Listing the library verifies, in the background, the newest files this
// executable has not marked verified yet (saved by an older build, or
// whose mark could not be written), so opening one is a hash; a file that fails
// is left unmarked and still refused when opened.
func TestListEvidencePreverifiesUnmarkedFiles(t *testing.T) {
	ts := startServer(t)
	f := ts.facade
	good, _ := facadeCapture(t, ts, "echo preverify good")
	bad, badOut := facadeCapture(t, ts, "echo preverify bad")
	// Files saved unmarked (by an older build, or a mark that could not be
	// written): their marks are removed.
	for _, id := range []string{good.EvidenceID, bad.EvidenceID} {
		if err := f.env.lib().ForgetMark(f.ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	tampered := bytes.Replace(badOut, []byte("preverify bad"), []byte("preverify BAD"), 1)
	if err := os.WriteFile(filepath.Join(f.env.DataDir, "evidence", bad.EvidenceID+".json"), tampered, 0o600); err != nil {
		t.Fatal(err)
	}
	// An open while the sweep runs shares its verification (-race).
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.GetEvidence(GetEvidenceArgs{ID: bad.EvidenceID})
	}()
	if _, status, e := apiCall[ListEvidenceResult](t, ts, "ListEvidence", map[string]any{}); status != 200 {
		t.Fatalf("list: %d %+v", status, e)
	}
	<-done
	f.env.lib().Wait() // the sweep has ended
	if m, ok := f.env.lib().ReadMark(f.ctx, good.EvidenceID); !ok || m.Verifier != f.env.verifier.ID() {
		t.Errorf("the good file is not marked after the sweep: %+v %v", m, ok)
	}
	if _, ok := f.env.lib().ReadMark(f.ctx, bad.EvidenceID); ok {
		t.Error("a tampered file was marked")
	}
	if _, status, e := apiCall[GetEvidenceResult](t, ts, "GetEvidence", GetEvidenceArgs{ID: bad.EvidenceID}); status != 400 || e.Code != "evidence_integrity_mismatch" {
		t.Errorf("the tampered file opened: %d %+v", status, e)
	}
}

// With every cache warm (both files read, verified and marked), swapping
// two saved files, or changing one byte of one, is still caught on the
// next read: the digest of the bytes read now decides, never the id.
func TestGetEvidenceSwappedOrChangedWhileCached(t *testing.T) {
	ts := startServer(t)
	f := ts.facade
	a, outA := facadeCapture(t, ts, "echo 'first <swap>'")
	b, outB := facadeCapture(t, ts, "echo 'second <swap>'")
	pathOf := func(id string) string { return filepath.Join(f.env.DataDir, "evidence", id+".json") }
	for _, id := range []string{a.EvidenceID, b.EvidenceID} {
		if _, status, e := apiCall[GetEvidenceResult](t, ts, "GetEvidence", GetEvidenceArgs{ID: id}); status != 200 {
			t.Fatalf("warm read of %s: %d %+v", id, status, e)
		}
	}
	// Swap: each id's file now holds the other's (verified, marked) bytes.
	os.WriteFile(pathOf(a.EvidenceID), outB, 0o600)
	os.WriteFile(pathOf(b.EvidenceID), outA, 0o600)
	for _, id := range []string{a.EvidenceID, b.EvidenceID} {
		if got, status, e := apiCall[GetEvidenceResult](t, ts, "GetEvidence", GetEvidenceArgs{ID: id}); status != 400 || e.Code != "evidence_integrity_mismatch" {
			t.Errorf("swapped file of %s returned: %d %+v %.80s", id, status, e, got.Evidence)
		}
	}
	// One byte changed in A's own file, its mark and cache entry still there.
	os.WriteFile(pathOf(b.EvidenceID), outB, 0o600)
	changed := bytes.Replace(outA, []byte("first <swap>"), []byte("first <SWAP>"), 1)
	if bytes.Equal(changed, outA) {
		t.Fatal("nothing changed")
	}
	os.WriteFile(pathOf(a.EvidenceID), changed, 0o600)
	if _, status, e := apiCall[GetEvidenceResult](t, ts, "GetEvidence", GetEvidenceArgs{ID: a.EvidenceID}); status != 400 || e.Code != "evidence_integrity_mismatch" {
		t.Errorf("changed file returned: %d %+v", status, e)
	}
	// B, untouched, still opens; and A once restored.
	os.WriteFile(pathOf(a.EvidenceID), outA, 0o600)
	for _, id := range []string{a.EvidenceID, b.EvidenceID} {
		if _, status, e := apiCall[GetEvidenceResult](t, ts, "GetEvidence", GetEvidenceArgs{ID: id}); status != 200 {
			t.Errorf("restored %s: %d %+v", id, status, e)
		}
	}
}
