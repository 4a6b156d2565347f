package app

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/backend/evidence"
)

// captureEvidenceFile runs `capture-process` on a scenario running
// /bin/sh -c script in a fresh work root (edit, if set, changes the
// scenario; see writeScenario) and returns its Evidence.
func captureEvidenceFile(t *testing.T, script string, edit func(map[string]any)) []byte {
	t.Helper()
	work := t.TempDir()
	r := cli(t, captureEnv(t, work), "capture-process", writeScenario(t, work, script, edit))
	if r.status != 0 {
		t.Fatalf("capture: %d %s", r.status, r.stderr)
	}
	return []byte(r.stdout)
}

// resealRecord decodes the capture record of the Evidence good (numbers
// kept exact), lets f change it and returns the Evidence re-sealed around
// the changed record: the envelope holds, only the record can be wrong.
func resealRecord(t *testing.T, good []byte, f func(rec map[string]any)) []byte {
	t.Helper()
	e, is := evidence.Parse(good)
	if len(is) > 0 {
		t.Fatal(is)
	}
	m := decodeNumbers(t, e.NormalizedResult)
	f(m)
	var err error
	if e.NormalizedResult, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := evidence.Seal(e); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func verifyIssues(t *testing.T, data []byte) (int, []evidenceIssue) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "evidence.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	r := cli(t, dataEnv(t), "evidence", "verify", path)
	if r.status == 0 {
		return 0, nil
	}
	e := decode[cliErr](t, r.stderr)
	if e.Code != "invalid_evidence" || r.stdout != "" {
		t.Fatalf("error %+v, stdout %q", e, r.stdout)
	}
	var issues []evidenceIssue
	json.Unmarshal(e.Details, &issues)
	return r.status, issues
}

func hasPath(issues []evidenceIssue, code, path string) bool {
	for _, is := range issues {
		if is.Code == code && is.Path == path {
			return true
		}
	}
	return false
}

func TestEvidenceVerify(t *testing.T) {
	good := captureEvidenceFile(t, "echo hello", nil)
	if status, issues := verifyIssues(t, good); status != 0 {
		t.Fatalf("a fresh capture does not verify: %v", issues)
	}
	ev, issues := evidence.Parse(good)
	if len(issues) > 0 {
		t.Fatal(issues)
	}
	var rec map[string]json.RawMessage
	json.Unmarshal(ev.NormalizedResult, &rec)
	var manifest map[string]json.RawMessage
	json.Unmarshal(rec["manifest"], &manifest)
	digest := strings.Trim(string(manifest["full_scenario_sha256"]), `"`)
	flipped := "0" + digest[1:]
	if digest[0] == '0' {
		flipped = "1" + digest[1:]
	}

	// Tampering without re-sealing breaks the evidence_id.
	tampered := bytes.Replace(good, []byte(digest), []byte(flipped), 1)
	if status, issues := verifyIssues(t, tampered); status != 1 || !hasPath(issues, evidence.CodeIDMismatch, "$.evidence_id") {
		t.Errorf("tampered: %d %v", status, issues)
	}

	// Re-sealed, the envelope holds but the record does not.
	reseal := func(f func(rec map[string]any)) []byte {
		t.Helper()
		return resealRecord(t, good, f)
	}
	cases := []struct {
		name, code, path string
		f                func(rec map[string]any)
	}{
		{"commitment", "commitment_mismatch", "$.normalized_result.manifest.full_scenario_sha256",
			func(m map[string]any) { m["manifest"].(map[string]any)["full_scenario_sha256"] = flipped }},
		{"reordered journal", "journal_mismatch", "$.normalized_result.event_journal[0].capture_order",
			func(m map[string]any) {
				j := m["event_journal"].([]any)
				j[0], j[1] = j[1], j[0]
			}},
		{"no after_settlement", "checkpoint_order", "$.normalized_result.filesystem_checkpoints[0].name",
			func(m map[string]any) { m["filesystem_checkpoints"] = m["filesystem_checkpoints"].([]any)[:1] }},
	}
	for _, c := range cases {
		status, issues := verifyIssues(t, reseal(c.f))
		if status != 1 || !hasPath(issues, c.code, c.path) {
			t.Errorf("%s: %d %v", c.name, status, issues)
		}
	}
	if r := cli(t, dataEnv(t), "evidence", "frobnicate"); r.status != 2 {
		t.Errorf("unknown subcommand: %d", r.status)
	}
	if r := cli(t, dataEnv(t), "evidence", "verify"); r.status != 2 {
		t.Errorf("no file: %d", r.status)
	}
}
