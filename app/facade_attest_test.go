package app

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/gatehouse/gatehouse/backend/attest"
	"github.com/gatehouse/gatehouse/backend/evidence"
)

func signatureIn(t *testing.T, ts *testServer, id string) EvidenceSignature {
	t.Helper()
	list, status, e := apiCall[ListEvidenceResult](t, ts, "ListEvidence", map[string]any{})
	if status != 200 {
		t.Fatalf("list: %d %+v", status, e)
	}
	for _, it := range list.Evidence {
		if it.EvidenceID == id {
			return it.Signature
		}
	}
	t.Fatalf("%s not listed", id)
	return EvidenceSignature{}
}

// TestEvidenceLibrarySignatures: the library says unsigned, then signed by
// this installation after "Export attestation"; an import keeps its
// attestation next to the file and shows its signer as trusted or
// untrusted; an attestation of another file refuses the import.
func TestEvidenceLibrarySignatures(t *testing.T) {
	ts := startServer(t)
	ev, out := facadeCapture(t, ts, "echo signed")
	if s := signatureIn(t, ts, ev.EvidenceID); s.Status != Unsigned {
		t.Fatalf("%+v", s)
	}
	keys, status, e := apiCall[SigningKeysResult](t, ts, "SigningKeys", SigningKeysArgs{})
	if status != 200 || len(keys.Installation) != 1 || !keys.Installation[0].Current {
		t.Fatalf("keys: %d %+v %+v", status, keys, e)
	}
	res, status, e := apiCall[AttestEvidenceResult](t, ts, "AttestEvidence", AttestEvidenceArgs{ID: ev.EvidenceID})
	if status != 200 || res.FileName != ev.EvidenceID+".json.intoto.jsonl" || res.Signature.Status != SignedByInstallation {
		t.Fatalf("attest: %d %+v %+v", status, res, e)
	}
	if s := signatureIn(t, ts, ev.EvidenceID); s.Status != SignedByInstallation || s.Fingerprint != keys.Installation[0].Fingerprint {
		t.Fatalf("%+v", s)
	}
	// The export is what `evidence attest` verifies: the CLI accepts it.
	dir := t.TempDir()
	evPath := filepath.Join(dir, ev.EvidenceID+".json")
	os.WriteFile(evPath, out, 0o600)
	os.WriteFile(evPath+attest.FileSuffix, []byte(res.Attestation), 0o600)
	if status, r, e := verifyAtt(t, map[string]string{"GATEHOUSE_DATA_DIR": ts.facade.env.DataDir}, evPath, evPath+attest.FileSuffix); status != 0 || r.Attestation.SignedBy != attest.SignerInstallation {
		t.Fatalf("cli verify of the UI export: %d %+v", status, e)
	}
	// The file changed on disk after signing: the library says invalid.
	saved := filepath.Join(ts.facade.env.DataDir, "evidence", ev.EvidenceID+".json")
	os.WriteFile(saved, append(append([]byte(nil), out...), '\n'), 0o600)
	if s := signatureIn(t, ts, ev.EvidenceID); s.Status != SignatureInvalid {
		t.Fatalf("changed file: %+v", s)
	}
	os.WriteFile(saved, out, 0o600)
	if s := signatureIn(t, ts, ev.EvidenceID); s.Status != SignedByInstallation {
		t.Fatalf("restored file: %+v", s)
	}
	// The same size and the old modification time: the remembered digest
	// must not be used (the change time differs).
	fi, _ := os.Stat(saved)
	same := append([]byte(nil), out...)
	i := bytes.Index(same, []byte("signed"))
	same[i] = 'S'
	os.WriteFile(saved, same, 0o600)
	os.Chtimes(saved, fi.ModTime(), fi.ModTime())
	if s := signatureIn(t, ts, ev.EvidenceID); s.Status != SignatureInvalid {
		t.Fatalf("changed in place with its old mtime: %+v", s)
	}
	os.WriteFile(saved, out, 0o600)

	// Another installation's capture, imported with its attestation.
	// (Made here, removed from the library, and attested by another data
	// directory: one process has one capture supervisor.)
	other := dataEnv(t)
	otherEnv, data := facadeCapture(t, ts, "echo elsewhere")
	if _, status, e := apiCall[DeleteEvidenceResult](t, ts, "DeleteEvidence", DeleteEvidenceArgs{ID: otherEnv.EvidenceID}); status != 200 {
		t.Fatalf("delete: %+v", e)
	}
	p := filepath.Join(t.TempDir(), "other.json")
	os.WriteFile(p, data, 0o600)
	r := cli(t, other, "evidence", "attest", p)
	if r.status != 0 {
		t.Fatal(r.stderr)
	}
	otherAtt := []byte(r.stdout)

	// An attestation of another file refuses the import, writing nothing.
	_, status, e = apiCall[ImportEvidenceResult](t, ts, "ImportEvidence", ImportEvidenceArgs{Name: "other.json", Data: out, Attestation: otherAtt})
	if status == 200 || e.Code != "invalid_attestation" || issuePaths(t, e)["$.payload.subject"] != attest.CodeSubjectMismatch {
		t.Fatalf("mismatched import: %d %+v", status, e)
	}
	if _, err := os.Stat(filepath.Join(ts.facade.env.DataDir, "evidence", otherEnv.EvidenceID+".json")); err == nil {
		t.Fatal("a refused import wrote the file")
	}

	imp, status, e := apiCall[ImportEvidenceResult](t, ts, "ImportEvidence", ImportEvidenceArgs{Name: "other.json", Data: data, Attestation: otherAtt})
	if status != 200 || imp.Item.Signature.Status != SignedUntrusted || imp.Item.Signature.Fingerprint == "" {
		t.Fatalf("import: %d %+v %+v", status, imp, e)
	}
	if b, err := os.ReadFile(filepath.Join(ts.facade.env.DataDir, "evidence", otherEnv.EvidenceID+".json.intoto.jsonl")); err != nil || string(b) != string(otherAtt) {
		t.Fatalf("attestation not kept next to the file: %v", err)
	}
	pem := cli(t, other, "evidence", "key", "show", "--pem").stdout
	keys, status, e = apiCall[SigningKeysResult](t, ts, "TrustSigningKey", TrustSigningKeyArgs{PEM: pem})
	if status != 200 || len(keys.Trusted) != 1 || keys.Trusted[0].Fingerprint != imp.Item.Signature.Fingerprint {
		t.Fatalf("trust: %d %+v %+v", status, keys, e)
	}
	if s := signatureIn(t, ts, otherEnv.EvidenceID); s.Status != SignedByTrusted || s.Fingerprint != keys.Trusted[0].Fingerprint {
		t.Fatalf("%+v", s)
	}
	if _, status, e := apiCall[SigningKeysResult](t, ts, "TrustSigningKey", TrustSigningKeyArgs{PEM: "junk"}); status == 200 || e.Code != "invalid_key" {
		t.Fatalf("junk key: %d %+v", status, e)
	}

	// Rotation: the old attestation still shows as this installation's.
	keys, status, _ = apiCall[SigningKeysResult](t, ts, "RotateSigningKey", RotateSigningKeyArgs{})
	if status != 200 || len(keys.Installation) != 2 || keys.Installation[0].Fingerprint == keys.Installation[1].Fingerprint {
		t.Fatalf("rotate: %+v", keys)
	}
	if s := signatureIn(t, ts, ev.EvidenceID); s.Status != SignedByInstallation || s.Fingerprint != keys.Installation[1].Fingerprint {
		t.Fatalf("after rotation: %+v", s)
	}
	// Delete takes the attestation with the file.
	apiCall[DeleteEvidenceResult](t, ts, "DeleteEvidence", DeleteEvidenceArgs{ID: ev.EvidenceID})
	if _, err := os.Stat(saved + attest.FileSuffix); !os.IsNotExist(err) {
		t.Fatalf("attestation left after delete: %v", err)
	}
}

// TestAttestComparison: a saved comparison (with a trace spec) is attested
// from the comparison view's button; the statement carries its verdicts
// and links, and the CLI verifies the export.
func TestAttestComparison(t *testing.T) {
	ts := startServer(t)
	work := t.TempDir()
	alpha, bravo := cmpCapture(t, ts, work, "alpha"), cmpCapture(t, ts, work, "bravo")
	v, status, e := apiCall[ComparisonView](t, ts, "CompareCaptures", map[string]any{"left": alpha, "right": bravo, "traceSpec": stepTrace, "save": true})
	if status != 200 || !v.Saved {
		t.Fatalf("compare: %d %+v", status, e)
	}
	res, status, e := apiCall[AttestEvidenceResult](t, ts, "AttestEvidence", AttestEvidenceArgs{ID: v.EvidenceID})
	if status != 200 {
		t.Fatalf("attest: %d %+v", status, e)
	}
	saved, _ := os.ReadFile(filepath.Join(ts.facade.env.DataDir, "evidence", v.EvidenceID+".json"))
	if string(res.Evidence) != string(saved) || res.EvidenceName != v.EvidenceID+".json" {
		t.Fatalf("the export is not the saved file's exact bytes (%s)", res.EvidenceName)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, res.EvidenceName)
	os.WriteFile(p, res.Evidence, 0o600)
	os.WriteFile(p+attest.FileSuffix, []byte(res.Attestation), 0o600)
	status, r, ce := verifyAtt(t, map[string]string{"GATEHOUSE_DATA_DIR": ts.facade.env.DataDir}, p, p+attest.FileSuffix)
	if status != 0 {
		t.Fatalf("verify: %+v", ce)
	}
	pred := r.Attestation.Predicate
	if r.Attestation.PredicateType != evidence.PredicateProcessComparisonTrace || pred.Operation != evidence.OperationCompareProcesses ||
		len(pred.EvidenceLinks) != 2 || pred.EvidenceLinks[0] != alpha || pred.EvidenceLinks[1] != bravo ||
		pred.Verdicts["status"] == "" || pred.Verdicts["terminal"] == "" || pred.Verdicts["trace"] == "" {
		t.Fatalf("predicate %+v", pred)
	}
	var res0 struct {
		Status string `json:"status"`
		Trace  struct {
			Verdict string `json:"verdict"`
		} `json:"trace"`
	}
	json.Unmarshal(v.Result, &res0)
	if pred.Verdicts["status"] != res0.Status || pred.Verdicts["trace"] != res0.Trace.Verdict {
		t.Fatalf("verdicts %v, result %s", pred.Verdicts, v.Result)
	}
	if s := signatureIn(t, ts, v.EvidenceID); s.Status != SignedByInstallation {
		t.Fatalf("%+v", s)
	}
}

// The signature state GetEvidence reports is about the bytes it returns:
// checked against their digest, not against the file read a second time
// (another program could replace it in between). A digest of other bytes
// is invalid even while the file on disk is the signed one.
func TestSignatureIsAboutTheBytesReturned(t *testing.T) {
	ts := startServer(t)
	ev, out := facadeCapture(t, ts, "echo signed bytes")
	if _, status, e := apiCall[AttestEvidenceResult](t, ts, "AttestEvidence", AttestEvidenceArgs{ID: ev.EvidenceID}); status != 200 {
		t.Fatalf("attest: %d %+v", status, e)
	}
	sumOf := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	sigs := ts.facade.signatures()
	if s := sigs.ofDigest(ts.facade, ev.EvidenceID, sumOf(out)); s.Status != SignedByInstallation {
		t.Fatalf("the signed bytes: %+v", s)
	}
	other := append(append([]byte(nil), out...), '\n')
	if s := sigs.ofDigest(ts.facade, ev.EvidenceID, sumOf(other)); s.Status != SignatureInvalid {
		t.Fatalf("other bytes while the file is the signed one: %+v", s)
	}
	got, status, e := apiCall[GetEvidenceResult](t, ts, "GetEvidence", GetEvidenceArgs{ID: ev.EvidenceID})
	if status != 200 || got.Item.Signature.Status != SignedByInstallation {
		t.Fatalf("GetEvidence: %d %+v %+v", status, got.Item.Signature, e)
	}
}
