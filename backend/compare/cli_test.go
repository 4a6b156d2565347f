package compare_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/gatehouse/gatehouse/app"
	"github.com/gatehouse/gatehouse/backend/compare"
	"github.com/gatehouse/gatehouse/backend/evidence"
)

// These tests drive `gatehouse compare-process-captures` through app.Main.

// writeCapture writes rec, finished as record.Verify accepts it, as
// sealed Process Capture Evidence.
func writeCapture(t *testing.T, dir, name string, rec compare.Obj) string {
	t.Helper()
	return writeRecord(t, dir, name, compare.FinishValid(rec))
}

// writeRecord writes rec as it is as sealed Process Capture Evidence.
func writeRecord(t *testing.T, dir, name string, rec compare.Obj) string {
	t.Helper()
	raw, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	e := &evidence.Envelope{
		Provider:      evidence.Provider{ID: evidence.ProcessProviderID, Name: "Gatehouse process capture", Version: "1"},
		PredicateType: evidence.PredicateProcessCapture, Operation: evidence.OperationCaptureProcess,
		Parameters: json.RawMessage(`{}`), NormalizedResult: raw,
		Confidence: evidence.Observed, Authority: evidence.AuthorityControlledReplay,
	}
	if err := evidence.Seal(e); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(e)
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

type cliOut struct {
	status         int
	stdout, stderr string
}

func runCLI(args ...string) cliOut {
	var out, errb bytes.Buffer
	st := app.Main(append([]string{"gatehouse", "compare-process-captures"}, args...), strings.NewReader(""), &out, &errb)
	return cliOut{st, out.String(), errb.String()}
}

type cliError struct {
	Error    bool           `json:"error"`
	Code     string         `json:"code"`
	Category string         `json:"category"`
	Message  string         `json:"message"`
	Details  map[string]any `json:"details"`
}

func wantCLIError(t *testing.T, r cliOut, status int, code string) cliError {
	t.Helper()
	if r.status != status || r.stdout != "" {
		t.Fatalf("status %d, stdout %q, stderr %s", r.status, r.stdout, r.stderr)
	}
	var e cliError
	if err := json.Unmarshal([]byte(r.stderr), &e); err != nil {
		t.Fatalf("stderr is not a structured error: %q", r.stderr)
	}
	if !e.Error || e.Code != code || e.Message == "" {
		t.Fatalf("error = %+v, want code %s", e, code)
	}
	return e
}

func TestCLICompare(t *testing.T) {
	dir := t.TempDir()
	a := writeCapture(t, dir, "a.json", compare.BaseRecord())
	changed := compare.BaseRecord()
	changed["frames"] = compare.Arr{compare.Frame(0, 5, "foo\rbar")}
	b := writeCapture(t, dir, "b.json", changed)

	r := runCLI(a, b)
	if r.status != 0 || r.stderr != "" {
		t.Fatalf("status %d, stderr %s", r.status, r.stderr)
	}
	e, issues := evidence.Parse([]byte(strings.TrimSuffix(r.stdout, "\n")))
	if len(issues) > 0 {
		t.Fatalf("stdout is not valid Evidence: %v", issues)
	}
	if e.PredicateType != evidence.PredicateProcessComparison || len(e.EvidenceLinks) != 2 {
		t.Errorf("envelope = %+v", e)
	}
	var res map[string]any
	json.Unmarshal(e.NormalizedResult, &res)
	if res["status"] != "changed" || res["terminal"] != "changed" {
		t.Errorf("result = %v", res)
	}
	// Flags may follow the files.
	r = runCLI(a, a, "--max-capture-age-ms", "100000000000")
	if r.status != 0 {
		t.Fatalf("status %d, stderr %s", r.status, r.stderr)
	}
}

func TestCLIErrors(t *testing.T) {
	dir := t.TempDir()
	a := writeCapture(t, dir, "a.json", compare.BaseRecord())
	other := compare.BaseRecord()
	c := compare.TestContract()
	c["timeout_ms"] = 5
	other["manifest"].(compare.Obj)["comparison_contract"] = c
	b := writeCapture(t, dir, "b.json", other)

	wantCLIError(t, runCLI(a), 2, "usage")
	wantCLIError(t, runCLI(a, a, a, a), 2, "usage")
	wantCLIError(t, runCLI(a, a, "--max-capture-age-ms", "0"), 2, "usage")
	wantCLIError(t, runCLI(a, filepath.Join(dir, "missing.json")), 1, "not_found")

	e := wantCLIError(t, runCLI(a, b), 1, compare.CodeIncompatibleContracts)
	if e.Message != "incompatible comparison contracts" || e.Details["issues"] == nil {
		t.Errorf("error = %+v", e)
	}
	// The fixtures completed on 2026-01-01, far more than 1 s ago.
	wantCLIError(t, runCLI(a, a, "--max-capture-age-ms", "1000"), 1, compare.CodeStaleCapture)

	garbage := filepath.Join(dir, "garbage.json")
	os.WriteFile(garbage, []byte(`{"schema_version": 2`), 0o600)
	e = wantCLIError(t, runCLI(garbage, a), 1, "invalid_evidence")
	if e.Details["side"] != "left" || e.Details["issues"] == nil {
		t.Errorf("details = %v", e.Details)
	}

	data, _ := os.ReadFile(a)
	tampered := filepath.Join(dir, "tampered.json")
	os.WriteFile(tampered, bytes.Replace(data, []byte(`hello`), []byte(`HELLO`), 1), 0o600)
	e = wantCLIError(t, runCLI(a, tampered), 1, "evidence_integrity_mismatch")
	if e.Details["side"] != "right" {
		t.Errorf("details = %v", e.Details)
	}

	// Valid Evidence whose record breaks an invariant.
	bad := compare.BaseRecord()
	bad["frames"] = compare.Arr{compare.Frame(3, 5, "x")}
	badPath := writeCapture(t, dir, "bad.json", bad)
	e = wantCLIError(t, runCLI(a, badPath), 1, compare.CodeInvalidCapture)
	if !strings.Contains(fmtJSON(e.Details["issues"]), "$.normalized_result.frames[0].sequence") {
		t.Errorf("issues = %v", e.Details["issues"])
	}
}

func fmtJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestCLISummaryOnTerminal(t *testing.T) {
	dir := t.TempDir()
	a := writeCapture(t, dir, "a.json", compare.BaseRecord())
	changed := compare.BaseRecord()
	changed["frames"] = compare.Arr{compare.Frame(0, 5, "foo\rbar\x1b[2J")}
	b := writeCapture(t, dir, "b.json", changed)

	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer ptmx.Close()
	spec := filepath.Join(dir, "trace.json")
	os.WriteFile(spec, []byte(`{"version":1,"events":[{"id":"hello","source":"terminal_raw","exact":{"data":"hello"},"ignore_fields":["sequence","at_ms"]}],"language":{"kind":"partial_order"}}`), 0o600)
	var out bytes.Buffer
	st := app.Main([]string{"gatehouse", "compare-process-captures", "--mode", "exact", a, b, spec}, strings.NewReader(""), &out, tty)
	tty.Close()
	if st != 0 {
		t.Fatalf("status %d", st)
	}
	s := readTerminal(ptmx)
	for _, want := range []string{"Comparison: changed (exact mode)", "terminal", "changed", "First divergence: terminal, item 0",
		`frames[0] at 5 ms: {"at_ms":5,"data":"hello"`, `"data":"foo\rbar\u001b[2J"`,
		"Trace: different (left pass, right fail)", "predicate on right"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "\x1b[2J") {
		t.Error("summary passes a recorded escape sequence to the terminal")
	}
	if strings.Contains(s, "\x1b[2J") || !strings.HasPrefix(out.String(), `{"schema_version":2`) {
		t.Errorf("stdout = %.80s", out.String())
	}
}

func TestCLITraceSpec(t *testing.T) {
	dir := t.TempDir()
	a := writeCapture(t, dir, "a.json", compare.BaseRecord())
	spec := filepath.Join(dir, "trace.json")
	os.WriteFile(spec, []byte(`{"version":1,"events":[{"id":"hello","source":"terminal_raw","exact":{"data":"hello"},"ignore_fields":["sequence","at_ms"]}],"language":{"kind":"partial_order"}}`), 0o600)
	r := runCLI(a, a, spec)
	if r.status != 0 {
		t.Fatalf("status %d: %s", r.status, r.stderr)
	}
	e, issues := evidence.Parse([]byte(strings.TrimSpace(r.stdout)))
	if len(issues) > 0 || e.PredicateType != evidence.PredicateProcessComparisonTrace {
		t.Fatalf("envelope %+v, issues %v", e, issues)
	}
	var res struct {
		Trace struct {
			Verdict string `json:"verdict"`
		} `json:"trace"`
	}
	json.Unmarshal(e.NormalizedResult, &res)
	if res.Trace.Verdict != "equivalent" {
		t.Errorf("trace verdict = %q", res.Trace.Verdict)
	}

	bad := filepath.Join(dir, "bad-trace.json")
	os.WriteFile(bad, []byte(`{"version":1,"events":[{"id":"a","source":"shim","exact":{}},{"id":"b","source":"shim","exact":{"x":1}}],"language":{"kind":"partial_order"}}`), 0o600)
	ce := wantCLIError(t, runCLI(a, a, bad), 1, compare.CodeInvalidTraceSpec)
	if !strings.Contains(fmtJSON(ce.Details["issues"]), compare.TraceCodeUnrelatedPair) {
		t.Errorf("issues = %v", ce.Details["issues"])
	}
	wantCLIError(t, runCLI(a, a, filepath.Join(dir, "nope.json")), 1, "not_found")
}

func TestCLIMode(t *testing.T) {
	dir := t.TempDir()
	a := writeCapture(t, dir, "a.json", compare.BaseRecord())
	for args, want := range map[string]string{"": "behavior", "--mode=behavior": "behavior", "--mode=exact": "exact"} {
		argv := []string{a, a}
		if args != "" {
			argv = append([]string{args}, argv...)
		}
		r := runCLI(argv...)
		if r.status != 0 {
			t.Fatalf("%q: status %d: %s", args, r.status, r.stderr)
		}
		e, issues := evidence.Parse([]byte(strings.TrimSpace(r.stdout)))
		var p, res struct {
			Mode string `json:"mode"`
		}
		if len(issues) > 0 || json.Unmarshal(e.Parameters, &p) != nil || json.Unmarshal(e.NormalizedResult, &res) != nil || p.Mode != want || res.Mode != want {
			t.Errorf("%q: parameters %s, result mode %q, issues %v", args, e.Parameters, res.Mode, issues)
		}
	}
	wantCLIError(t, runCLI("--mode", "fuzzy", a, a), 2, "usage")
	wantCLIError(t, runCLI("--mode=", a, a), 2, "usage")
}

// The summary of a behavior comparison names the differing row in words,
// its recorded control characters never live.
func TestCLISummaryNamesTheRow(t *testing.T) {
	dir := t.TempDir()
	a := writeCapture(t, dir, "a.json", compare.BaseRecord())
	changed := compare.BaseRecord()
	changed["frames"] = compare.Arr{compare.Frame(0, 5, "hellO\x1b[2J")}
	changed["rendered_frames"] = compare.Arr{compare.Rendered(0, 5, "hellO\x1b]0;x\x07")}
	b := writeCapture(t, dir, "b.json", changed)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer ptmx.Close()
	var out bytes.Buffer
	st := app.Main([]string{"gatehouse", "compare-process-captures", a, b}, strings.NewReader(""), &out, tty)
	tty.Close()
	if st != 0 {
		t.Fatalf("status %d", st)
	}
	s := readTerminal(ptmx)
	if !strings.Contains(s, "Comparison: changed (behavior mode)") || !strings.Contains(s, `row 1: "hello" → "hellO\x1b]0;x\a"`) {
		t.Errorf("summary:\n%s", s)
	}
	if strings.Contains(s, "\x1b]0;") || strings.Contains(s, "\x1b[2J") {
		t.Error("the summary passes a recorded control sequence to the terminal")
	}
}

// TestCLIRefusesRecordsTheVerifierRejects: a capture file is checked with
// record.Verify before it is compared, so a sealed record that breaks an
// invariant Compare does not read itself is refused with every failing
// path, not compared. Checked to fail without VerifyRecords in the
// command: the first pair was refused only for its differing contracts,
// the other two were compared (status 0).
func TestCLIRefusesRecordsTheVerifierRejects(t *testing.T) {
	dir := t.TempDir()
	good := writeCapture(t, dir, "good.json", compare.BaseRecord())
	cases := []struct {
		name, path, code string
		rec              func() compare.Obj
	}{
		{"scenario contradicts the contract", "$.normalized_result.manifest.comparison_contract", "commitment_mismatch",
			func() compare.Obj { return compare.Finish(compare.BaseRecord()) }},
		{"final files are not the last checkpoint's", "$.normalized_result.files_after", "state_mismatch", func() compare.Obj {
			r := compare.FinishValid(compare.BaseRecord())
			r["files_after"] = compare.Arr{compare.Obj{"path": "<filesystem-root-0>/a", "mode": 420, "size": 1, "type": "file",
				"sha256": strings.Repeat("a", 64), "symlink_target": nil}}
			return r
		}},
		{"unknown member of a frame", "$.normalized_result.frames[0].note", "unknown_field", func() compare.Obj {
			r := compare.FinishValid(compare.BaseRecord())
			r["frames"].(compare.Arr)[0].(compare.Obj)["note"] = "x"
			return r
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad := writeRecord(t, dir, "bad.json", tc.rec())
			e := wantCLIError(t, runCLI(good, bad), 1, compare.CodeInvalidCapture)
			issues := fmtJSON(e.Details["issues"])
			if !strings.Contains(issues, `"side":"right"`) || !strings.Contains(issues, tc.path) || !strings.Contains(issues, tc.code) {
				t.Errorf("issues = %s, want %s at %s on the right", issues, tc.code, tc.path)
			}
		})
	}
}

// readTerminal is what the terminal ptmx shows until its other end is
// closed (or 5 s pass).
func readTerminal(ptmx *os.File) string {
	var out bytes.Buffer
	ptmx.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 4096)
	for {
		n, err := ptmx.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			return out.String()
		}
	}
}
