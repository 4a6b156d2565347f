package app

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/backend/capture"
	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/policy"
)

// facadeCapture makes one real capture (a PTY running /bin/sh) with the
// test server's supervisor and saves it like the CLI does.
func facadeCapture(t *testing.T, ts *testServer, script string) (*evidence.Envelope, []byte) {
	t.Helper()
	work := t.TempDir()
	sc, issues := capture.ParseScenario([]byte(`{"approved":true,"executable":"/bin/sh","arguments":["-c",` + evJSONString(script) + `],
		"working_directory":` + evJSONString(work) + `,"environment":{"PATH":"/usr/bin:/bin"},"timeout_ms":10000}`))
	if len(issues) > 0 {
		t.Fatalf("scenario: %v", issues)
	}
	pol := policy.DefaultCaptureSettings()
	pol.Enabled = true
	pol.ExecutableRoots = []string{"/bin", "/usr/bin"}
	pol.WorkingRoots = []string{work}
	pol.AllowedEnv = []string{"PATH"}
	pol.AllowExternalNetwork = true
	f := ts.facade
	_, ev, out, _, err := captureAndSave(f.ctx, f.env, f.sup, &f.renderers, sc, pol)
	if err != nil {
		t.Fatal(err)
	}
	return ev, out
}

func evJSONString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// apiCall calls a facade method over the browser bridge and decodes the
// result or the structured error.
func apiCall[T any](t *testing.T, ts *testServer, method string, args any) (T, int, cliErr) {
	t.Helper()
	body, _ := json.Marshal(args)
	status, m := ts.do(t, req{method: "POST", path: "/api/" + method, body: string(body), origin: ts.origin(), token: ts.token})
	raw, _ := json.Marshal(m)
	var v T
	var e cliErr
	if status == 200 {
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%s: decode %s: %v", method, raw, err)
		}
	} else if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatalf("%s: decode error %s: %v", method, raw, err)
	}
	return v, status, e
}

func issuePaths(t *testing.T, e cliErr) map[string]string {
	t.Helper()
	var issues []evidenceIssue
	if err := json.Unmarshal(e.Details, &issues); err != nil {
		t.Fatalf("details %s: %v", e.Details, err)
	}
	out := map[string]string{}
	for _, is := range issues {
		out[is.Path] = is.Code
	}
	return out
}

func TestEvidenceLibraryListGetImportDelete(t *testing.T) {
	ts := startServer(t)
	ev, out := facadeCapture(t, ts, "printf 'hello <library>\\n'")
	dataDir := ts.facade.env.DataDir

	list, status, _ := apiCall[ListEvidenceResult](t, ts, "ListEvidence", map[string]any{})
	if status != 200 || len(list.Evidence) != 1 || list.Evidence[0].EvidenceID != ev.EvidenceID || list.Evidence[0].Origin != OriginCaptured {
		t.Fatalf("list: %d %+v", status, list)
	}
	var sum map[string]any
	json.Unmarshal(list.Evidence[0].Summary, &sum)
	if !strings.Contains(sum["command"].(string), "hello <library>") || sum["origin"] != OriginCaptured {
		t.Errorf("summary %v", sum)
	}

	got, status, e := apiCall[GetEvidenceResult](t, ts, "GetEvidence", GetEvidenceArgs{ID: ev.EvidenceID})
	gotC, _ := evidence.Canonicalize(got.Evidence)
	outC, _ := evidence.Canonicalize(out)
	if status != 200 || len(gotC) == 0 || !bytes.Equal(gotC, outC) || !got.Verification.Valid || !got.Verification.RecordVerified {
		t.Fatalf("get: %d %+v %+v", status, got.Verification, e)
	}

	// Importing the same bytes again changes nothing.
	imp, status, e := apiCall[ImportEvidenceResult](t, ts, "ImportEvidence", ImportEvidenceArgs{Name: "same.json", Data: out})
	if status != 200 || !imp.AlreadyPresent || imp.Item.EvidenceID != ev.EvidenceID || imp.Item.Origin != OriginCaptured {
		t.Fatalf("re-import: %d %+v %+v", status, imp, e)
	}

	// An indexed capture whose file went missing is restored by importing it.
	os.Remove(filepath.Join(dataDir, "evidence", ev.EvidenceID+".json"))
	imp, status, e = apiCall[ImportEvidenceResult](t, ts, "ImportEvidence", ImportEvidenceArgs{Name: "restore.json", Data: out})
	if status != 200 || imp.AlreadyPresent {
		t.Fatalf("restore: %d %+v %+v", status, imp, e)
	}
	if _, status, e := apiCall[GetEvidenceResult](t, ts, "GetEvidence", GetEvidenceArgs{ID: ev.EvidenceID}); status != 200 {
		t.Fatalf("get after restore: %d %+v", status, e)
	}

	// Delete, then import the file back: it is listed as imported.
	del, status, e := apiCall[DeleteEvidenceResult](t, ts, "DeleteEvidence", DeleteEvidenceArgs{ID: ev.EvidenceID})
	if status != 200 || !del.Deleted {
		t.Fatalf("delete: %d %+v", status, e)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "evidence", ev.EvidenceID+".json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("file still there: %v", err)
	}
	if _, status, e := apiCall[GetEvidenceResult](t, ts, "GetEvidence", GetEvidenceArgs{ID: ev.EvidenceID}); status != 404 || e.Code != "evidence_not_found" {
		t.Errorf("get after delete: %d %+v", status, e)
	}
	if _, status, e := apiCall[DeleteEvidenceResult](t, ts, "DeleteEvidence", DeleteEvidenceArgs{ID: ev.EvidenceID}); status != 404 || e.Code != "evidence_not_found" {
		t.Errorf("second delete: %d %+v", status, e)
	}
	imp, status, e = apiCall[ImportEvidenceResult](t, ts, "ImportEvidence", ImportEvidenceArgs{Name: "capture.json", Data: out})
	if status != 200 || imp.AlreadyPresent || imp.Item.Origin != OriginImported || imp.Item.EvidenceID != ev.EvidenceID {
		t.Fatalf("import: %d %+v %+v", status, imp, e)
	}
	json.Unmarshal(imp.Item.Summary, &sum)
	if sum["file_name"] != "capture.json" || sum["frames"] == nil {
		t.Errorf("imported summary %v", sum)
	}
	saved, err := os.ReadFile(filepath.Join(dataDir, "evidence", ev.EvidenceID+".json"))
	if err != nil || !bytes.Equal(saved, out) {
		t.Fatalf("imported file differs: %v", err)
	}

	// Reading twice: the second read finds the same bytes already verified.
	for i := range 2 {
		if got, status, e := apiCall[GetEvidenceResult](t, ts, "GetEvidence", GetEvidenceArgs{ID: ev.EvidenceID}); status != 200 || got.Verification.EvidenceID != ev.EvidenceID {
			t.Fatalf("read %d: %d %+v", i, status, e)
		}
	}
	// The saved file is re-verified on every read (the cache only knows
	// the digest of bytes that passed): tampering on disk is caught, with
	// its failing path, and nothing is returned.
	tampered := bytes.Replace(saved, []byte("hello <library>"), []byte("hello <LIBRARY>"), 1)
	if err := os.WriteFile(filepath.Join(dataDir, "evidence", ev.EvidenceID+".json"), tampered, 0o600); err != nil {
		t.Fatal(err)
	}
	_, status, e = apiCall[GetEvidenceResult](t, ts, "GetEvidence", GetEvidenceArgs{ID: ev.EvidenceID})
	if status != 400 || e.Code != "evidence_integrity_mismatch" || issuePaths(t, e)["$.evidence_id"] != "evidence_id_mismatch" {
		t.Errorf("tampered read: %d %+v", status, e)
	}
}

func TestImportEvidenceRejectsTamperingWithEveryPathAndNoChange(t *testing.T) {
	ts := startServer(t)
	ev, out := facadeCapture(t, ts, "echo tamper")
	if _, status, _ := apiCall[DeleteEvidenceResult](t, ts, "DeleteEvidence", DeleteEvidenceArgs{ID: ev.EvidenceID}); status != 200 {
		t.Fatal("delete")
	}
	evDir := filepath.Join(ts.facade.env.DataDir, "evidence")
	before, _ := os.ReadDir(evDir)

	// A changed record, re-sealed so the envelope id matches: the record's
	// commitment fails at its own path.
	var env evidence.Envelope
	if err := json.Unmarshal(out, &env); err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	json.Unmarshal(env.NormalizedResult, &rec)
	rec["manifest"].(map[string]any)["scenario"].(map[string]any)["timeout_ms"] = 1
	env.NormalizedResult, _ = json.Marshal(rec)
	if err := evidence.Seal(&env); err != nil {
		t.Fatal(err)
	}
	resealed, _ := json.Marshal(env)

	cases := []struct {
		name  string
		data  []byte
		code  string
		paths []string
	}{
		{"changed byte", bytes.Replace(out, []byte("tamper"), []byte("tampex"), 1), "invalid_evidence", []string{"$.evidence_id"}},
		{"resealed record", resealed, "invalid_evidence", []string{"$.normalized_result.manifest.full_scenario_sha256"}},
		{"not json", []byte("{"), "invalid_evidence", []string{"$"}},
		{"empty", nil, "invalid_evidence", []string{"$"}},
	}
	for _, c := range cases {
		_, status, e := apiCall[ImportEvidenceResult](t, ts, "ImportEvidence", ImportEvidenceArgs{Name: c.name, Data: c.data})
		if status != 400 || e.Code != c.code {
			t.Errorf("%s: %d %+v", c.name, status, e)
			continue
		}
		paths := issuePaths(t, e)
		for _, p := range c.paths {
			if _, ok := paths[p]; !ok {
				t.Errorf("%s: no issue at %s in %v", c.name, p, paths)
			}
		}
	}
	after, _ := os.ReadDir(evDir)
	list, _, _ := apiCall[ListEvidenceResult](t, ts, "ListEvidence", map[string]any{})
	if len(after) != len(before) || len(list.Evidence) != 0 {
		t.Errorf("a refused import changed state: %d → %d files, %d listed", len(before), len(after), len(list.Evidence))
	}
}

func TestImportEvidenceSizeLimit(t *testing.T) {
	ts := startServer(t)
	f := ts.facade
	// At the limit the file is parsed (and fails as JSON); one byte past
	// it is refused before parsing.
	at := bytes.Repeat([]byte(" "), MaxImportBytes)
	_, err := f.ImportEvidence(ImportEvidenceArgs{Name: "big.json", Data: at})
	var ce *CLIError
	if !errors.As(err, &ce) || ce.Code != "invalid_evidence" {
		t.Errorf("at the limit: %v", err)
	}
	_, err = f.ImportEvidence(ImportEvidenceArgs{Name: "big.json", Data: append(at, ' ')})
	if !errors.As(err, &ce) || ce.Code != "input_too_large" || !strings.Contains(ce.Message, "67108864") {
		t.Errorf("one past the limit: %v", err)
	}
	// The bridge reads an ImportEvidence body of a file at the limit, and
	// refuses one much larger than it.
	if callBodyLimit("ImportEvidence") < int64(base64.StdEncoding.EncodedLen(MaxImportBytes)) || callBodyLimit("ListEvidence") != 4<<20 {
		t.Errorf("body limits %d %d", callBodyLimit("ImportEvidence"), callBodyLimit("ListEvidence"))
	}
	if list, _ := f.ListEvidence(ListEvidenceArgs{}); len(list.Evidence) != 0 {
		t.Errorf("refused imports were listed: %+v", list)
	}
	if _, err := f.ListEvidence(ListEvidenceArgs{Limit: 1001}); err == nil {
		t.Error("limit 1001 accepted")
	}
	for _, id := range []string{"", "ev_x", "../../etc/passwd", "ev_" + strings.Repeat("A", 64)} {
		if _, err := f.GetEvidence(GetEvidenceArgs{ID: id}); !errors.As(err, &ce) || ce.Code != "invalid_arguments" {
			t.Errorf("get %q: %v", id, err)
		}
		if _, err := f.DeleteEvidence(DeleteEvidenceArgs{ID: id}); !errors.As(err, &ce) || ce.Code != "invalid_arguments" {
			t.Errorf("delete %q: %v", id, err)
		}
	}
}

func TestImportEvidenceNameLimit(t *testing.T) {
	ts := startServer(t)
	junk := []byte(`{"not":"evidence"}`)
	at := strings.Repeat("é", maxImportName)
	if _, status, e := apiCall[ImportEvidenceResult](t, ts, "ImportEvidence", ImportEvidenceArgs{Name: at, Data: junk}); status != 400 || e.Code != "invalid_evidence" {
		t.Errorf("name at the limit: %d %+v", status, e)
	}
	if _, status, e := apiCall[ImportEvidenceResult](t, ts, "ImportEvidence", ImportEvidenceArgs{Name: at + "x", Data: junk}); status != 400 || e.Code != "invalid_name" || issuePaths(t, e)["$.name"] != "invalid_name" {
		t.Errorf("name one past the limit: %d %+v", status, e)
	}
}
