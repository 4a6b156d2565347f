package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse/gatehouse/backend/consent"
)

// TestMCPCaptureObeysSafeModeAndCapability is the attacker's side of the
// capture capability rule: an agent added without can_execute_skills, and
// any agent while safe mode is on, cannot run a program through
// capture_process_scenario; each refusal is in the run history.
func TestMCPCaptureObeysSafeModeAndCapability(t *testing.T) {
	work := t.TempDir()
	mark := filepath.Join(work, "ran")
	setCaptureEnv(t, work)
	ts := startServer(t)
	res, err := ts.facade.AddAgent(AddAgentArgs{Name: "no-exec", CanExecuteSkills: false})
	if err != nil {
		t.Fatal(err)
	}
	_, capTok := addAgent(t, ts, "can-exec")
	scenario := map[string]any{"approved": true, "executable": "/usr/bin/touch", "arguments": []any{mark}, "working_directory": work}

	call := func(tok string) *mcp.CallToolResult {
		cs := mcpConnect(t, ts, tok)
		defer cs.Close()
		r, err := cs.CallTool(ts.facade.ctx, &mcp.CallToolParams{Name: "capture_process_scenario", Arguments: scenario})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	expectRefused := func(r *mcp.CallToolResult, code string) {
		t.Helper()
		sc, _ := r.StructuredContent.(map[string]any)
		if !r.IsError || sc["code"] != code {
			raw, _ := json.Marshal(r)
			t.Fatalf("want refusal %s, got %s", code, raw)
		}
		if _, err := os.Stat(mark); err == nil {
			t.Fatal("the program ran")
		}
	}

	expectRefused(call(res.Token), consent.CodeCapabilityMissing)
	if _, err := ts.facade.SetPolicy(SetPolicyArgs{Policy: json.RawMessage(`{"mode":"blocked","safeMode":true,"trusted":[]}`)}); err != nil {
		t.Fatal(err)
	}
	expectRefused(call(capTok), consent.CodeSafeMode)

	runs, err := ts.facade.ListRuns(ListRunsArgs{Skill: consent.CaptureSkill})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs.Runs) != 2 || runs.Runs[0].Status != "refused" || runs.Runs[0].AuthorizedBy != "policy: safe mode" ||
		runs.Runs[1].AuthorizedBy != "agent: can_execute_skills" || runs.Runs[1].Agent != res.Agent.ID {
		raw, _ := json.Marshal(runs.Runs)
		t.Fatalf("run history %s, want the two refusals", raw)
	}

	// Safe mode off again: the capable agent's capture runs (the refusals
	// came from the rules above, not from a broken setup).
	if _, err := ts.facade.SetPolicy(SetPolicyArgs{Policy: json.RawMessage(`{"mode":"ask","safeMode":false,"trusted":[]}`)}); err != nil {
		t.Fatal(err)
	}
	if r := call(capTok); r.IsError {
		raw, _ := json.Marshal(r)
		t.Fatalf("allowed capture failed: %s", raw)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Fatalf("the allowed capture did not run: %v", err)
	}
}

// TestCLICaptureRefusedInSafeMode: safe mode refuses the local user's
// capture-process too, recorded in the run history like a run's.
func TestCLICaptureRefusedInSafeMode(t *testing.T) {
	work := t.TempDir()
	mark := filepath.Join(work, "ran")
	env := captureEnv(t, work)
	pol := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(pol, []byte(`{"mode":"ask","safeMode":true,"trusted":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := cli(t, env, "policy", "set", pol); r.status != 0 {
		t.Fatalf("policy set: %d %s", r.status, r.stderr)
	}
	r := cli(t, env, "capture-process", writeScenario(t, work, "touch "+mark, nil))
	if r.status == 0 || !strings.Contains(r.stderr, consent.CodeSafeMode) {
		t.Fatalf("status %d, stderr %s; want a safe_mode refusal", r.status, r.stderr)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("the program ran in safe mode")
	}
	runs := cli(t, env, "runs", "--json")
	if !strings.Contains(runs.stdout, consent.CaptureSkill) || !strings.Contains(runs.stdout, "policy: safe mode") {
		t.Fatalf("run history %s %s", runs.stdout, runs.stderr)
	}
}
