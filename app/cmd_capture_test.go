package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/backend/capture"
	"github.com/gatehouse/gatehouse/backend/capture/record"
	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/policy"
)

// captureEnv is a private data directory plus policy overrides that allow
// /bin and /usr/bin executables working below workRoot.
func captureEnv(t *testing.T, workRoot string) map[string]string {
	env := dataEnv(t)
	roots, _ := json.Marshal([]string{workRoot})
	env[policy.CaptureEnvEnabled] = "true"
	env[policy.CaptureEnvExecutableRoots] = `["/bin","/usr/bin"]`
	env[policy.CaptureEnvWorkingRoots] = string(roots)
	env[policy.CaptureEnvAllowedEnv] = `["PATH"]`
	env[policy.CaptureEnvAllowExternalNetwork] = "true"
	return env
}

// writeScenario writes a scenario running /bin/sh -c script in workRoot.
func writeScenario(t *testing.T, workRoot, script string, edit func(map[string]any)) string {
	t.Helper()
	m := map[string]any{"approved": true, "executable": "/bin/sh", "arguments": []any{"-c", script},
		"working_directory": workRoot, "environment": map[string]any{"PATH": "/usr/bin:/bin"}}
	if edit != nil {
		edit(m)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "scenario.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

type cliErr struct {
	Error    bool            `json:"error"`
	Code     string          `json:"code"`
	Category string          `json:"category"`
	Message  string          `json:"message"`
	Details  json.RawMessage `json:"details"`
}

// noCaptureLeftovers checks that no temporary root is left in the runs
// directory.
func noCaptureLeftovers(t *testing.T, dataDir string) {
	t.Helper()
	entries, _ := os.ReadDir(filepath.Join(dataDir, "runs"))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".capture-") {
			t.Errorf("capture leftover %s", e.Name())
		}
	}
}

func TestCaptureProcessWritesSealedEvidence(t *testing.T) {
	work := t.TempDir()
	state := filepath.Join(work, "state")
	os.Mkdir(state, 0o755)
	env := captureEnv(t, work)
	path := writeScenario(t, work, "printf 'hello <world>\\n'; echo x > state/out", func(m map[string]any) {
		m["filesystem_roots"] = []any{state}
		m["checkpoints"] = []any{map[string]any{"name": "said_hello", "trigger": map[string]any{"type": "terminal_literal", "value": "hello"}}}
	})
	r := cli(t, env, "capture-process", path)
	if r.status != 0 || r.stderr != "" {
		t.Fatalf("status %d, stderr %s", r.status, r.stderr)
	}
	ev, issues := evidence.Parse([]byte(r.stdout))
	if len(issues) > 0 {
		t.Fatalf("stdout is not valid Evidence: %v", evidence.IssueList(issues))
	}
	if ev.PredicateType != evidence.PredicateProcessCapture || ev.Provider.ID != evidence.ProcessProviderID ||
		ev.Operation != evidence.OperationCaptureProcess || ev.Confidence != evidence.Observed || ev.Authority != evidence.AuthorityControlledReplay {
		t.Errorf("envelope %+v", ev)
	}
	if !strings.Contains(r.stdout, `"<filesystem-root-0>/out"`) {
		t.Error("placeholders are HTML-escaped in the output")
	}
	var rec capture.Record
	if err := json.Unmarshal(ev.NormalizedResult, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Exit.Code == nil || *rec.Exit.Code != 0 || len(rec.FilesystemEffects) != 1 || rec.FilesystemEffects[0].Path != "<filesystem-root-0>/out" ||
		rec.FilesystemEffects[0].Status != capture.EffectCreated || len(rec.FilesystemCheckpoints) != 3 {
		t.Errorf("record exit %+v, effects %+v, checkpoints %d", rec.Exit, rec.FilesystemEffects, len(rec.FilesystemCheckpoints))
	}
	if issues := record.Verify(ev.NormalizedResult); len(issues) > 0 {
		t.Errorf("record does not verify: %v", issues)
	}
	saved := filepath.Join(env["GATEHOUSE_DATA_DIR"], "evidence", ev.EvidenceID+".json")
	b, err := os.ReadFile(saved)
	if err != nil || !bytes.Equal(b, []byte(r.stdout)) {
		t.Fatalf("saved copy: %v (equal %v)", err, bytes.Equal(b, []byte(r.stdout)))
	}
	if fi, _ := os.Stat(saved); fi.Mode().Perm() != 0o600 {
		t.Errorf("saved copy mode %v", fi.Mode())
	}
	if fi, _ := os.Stat(filepath.Dir(saved)); fi.Mode().Perm() != 0o700 {
		t.Errorf("evidence directory mode %v", fi.Mode())
	}
	noCaptureLeftovers(t, env["GATEHOUSE_DATA_DIR"])

	v := cli(t, env, "evidence", "verify", saved)
	if v.status != 0 || decode[EvidenceVerifyResult](t, v.stdout) != (EvidenceVerifyResult{Valid: true, EvidenceID: ev.EvidenceID, PredicateType: evidence.PredicateProcessCapture, RecordVerified: true}) {
		t.Errorf("verify: status %d, stdout %s, stderr %s", v.status, v.stdout, v.stderr)
	}
}

func TestCaptureProcessRejectsInvalidScenarioWithEveryPath(t *testing.T) {
	work := t.TempDir()
	path := writeScenario(t, work, "true", func(m map[string]any) {
		m["approved"] = false
		m["executable"] = "sh"
		m["timeout_ms"] = 0
	})
	r := cli(t, captureEnv(t, work), "capture-process", path)
	if r.status != 1 || r.stdout != "" {
		t.Fatalf("status %d, stdout %q", r.status, r.stdout)
	}
	e := decode[cliErr](t, r.stderr)
	var details []capture.Issue
	json.Unmarshal(e.Details, &details)
	paths := map[string]bool{}
	for _, d := range details {
		paths[d.Path] = true
	}
	if e.Code != "invalid_scenario" || e.Category != CategoryInvalid || !paths["$.approved"] || !paths["$.executable"] || !paths["$.timeout_ms"] {
		t.Errorf("error %+v, details %s", e, e.Details)
	}
	if r := cli(t, captureEnv(t, work), "capture-process"); r.status != 2 {
		t.Errorf("no argument: status %d", r.status)
	}
	if r := cli(t, captureEnv(t, work), "capture-process", filepath.Join(work, "missing.json")); r.status != 1 || decode[cliErr](t, r.stderr).Code != "input" {
		t.Errorf("missing file: %d %s", r.status, r.stderr)
	}
}

func TestCaptureProcessPolicyRefusals(t *testing.T) {
	work := t.TempDir()
	marker := filepath.Join(work, "ran")
	path := writeScenario(t, work, "touch "+marker, nil)
	for _, c := range []struct {
		name string
		edit func(map[string]string)
		code string
	}{
		{"disabled by default", func(e map[string]string) { delete(e, policy.CaptureEnvEnabled) }, policy.ReasonCaptureDisabled},
		{"executable outside roots", func(e map[string]string) { e[policy.CaptureEnvExecutableRoots] = `["/opt"]` }, policy.ReasonExecutableOutsideRoots},
		{"environment name", func(e map[string]string) { e[policy.CaptureEnvAllowedEnv] = `[]` }, policy.ReasonEnvironmentNameNotAllowed},
		{"malformed override", func(e map[string]string) { e[policy.CaptureEnvWorkingRoots] = `not json` }, "capture_policy"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := captureEnv(t, work)
			c.edit(env)
			r := cli(t, env, "capture-process", path)
			if e := decode[cliErr](t, r.stderr); r.status != 1 || r.stdout != "" || e.Code != c.code {
				t.Errorf("status %d, error %+v", r.status, e)
			}
		})
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a refused scenario ran")
	}
}

func TestCaptureProcessCtrlCCleansUp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	work := t.TempDir()
	env := captureEnv(t, work)
	// The target is found by its command line in /proc, machine-wide: a
	// per-run marker keeps another run of this test on the machine from
	// looking like this capture's target.
	marker := fmt.Sprintf("31.%09d", time.Now().UnixNano()%1e9)
	path := writeScenario(t, work, "echo started; exec /bin/sleep "+marker, nil)
	cmd := exec.Command(bin, "capture-process", path)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(processesWith(marker)) == 0 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the target never started: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		t.Fatal("capture-process did not stop after SIGINT")
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 || stdout.Len() != 0 {
		t.Errorf("exit %d, stdout %q", code, stdout.String())
	}
	if e := decode[cliErr](t, stderr.String()); e.Code != "cancelled" {
		t.Errorf("error %+v", e)
	}
	if pids := processesWith(marker); len(pids) > 0 {
		t.Errorf("target processes %v outlived the capture", pids)
	}
	noCaptureLeftovers(t, env["GATEHOUSE_DATA_DIR"])
	if entries, _ := os.ReadDir(filepath.Join(env["GATEHOUSE_DATA_DIR"], "evidence")); len(entries) > 0 {
		t.Errorf("evidence written: %v", entries)
	}
}
