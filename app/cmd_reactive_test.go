package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/gatehouse/gatehouse/backend/evidence"
)

// reactivePrompt answers "Name? " when it appears and passes on the greeting.
var reactivePrompt = map[string]any{"version": 1, "initial_state": "ask", "deadline_ms": 8000, "states": []any{
	map[string]any{"id": "ask", "deadline_ms": 3000, "on": []any{map[string]any{"id": "answer", "priority": 1,
		"when": map[string]any{"kind": "terminal_text", "text": "Name? "}, "actions": []any{map[string]any{"type": "send_input", "data": "bob\r"}},
		"target": map[string]any{"kind": "goto", "state": "greeted"}}}},
	map[string]any{"id": "greeted", "deadline_ms": 3000, "on": []any{map[string]any{"id": "done", "priority": 1,
		"when": map[string]any{"kind": "terminal_text", "text": "hi bob"}, "target": map[string]any{"kind": "finish", "outcome": "passed"}}}},
}}

func TestCLIReactiveCaptureAndVerify(t *testing.T) {
	good := captureEvidenceFile(t, `printf "Name? "; read n; echo "hi $n"`,
		func(m map[string]any) { m["reactive"] = reactivePrompt })
	ev, issues := evidence.Parse(good)
	if len(issues) > 0 {
		t.Fatal(issues)
	}
	var rec struct {
		ReactiveRun struct {
			Outcome string `json:"outcome"`
		} `json:"reactive_run"`
	}
	json.Unmarshal(ev.NormalizedResult, &rec)
	if rec.ReactiveRun.Outcome != "passed" {
		t.Fatalf("reactive_run %s", ev.NormalizedResult)
	}
	if status, issues := verifyIssues(t, good); status != 0 {
		t.Fatalf("a fresh reactive capture does not verify: %v", issues)
	}
	// A re-sealed envelope whose reactive_run claims another transition.
	mutated := resealRecord(t, good, func(m map[string]any) {
		m["reactive_run"].(map[string]any)["transitions"].([]any)[0].(map[string]any)["transition_id"] = "done"
	})
	if status, issues := verifyIssues(t, mutated); status != 1 || !hasPath(issues, "unknown_state", "$.normalized_result.reactive_run.transitions[0].transition_id") {
		t.Fatalf("mutated reactive_run: %d %v", status, issues)
	}
}

func TestCLIReactivePreflightRefusal(t *testing.T) {
	work := t.TempDir()
	graph := map[string]any{"version": 1, "initial_state": "s", "deadline_ms": 1000, "states": []any{map[string]any{"id": "s", "deadline_ms": 1000,
		"on": []any{map[string]any{"id": "t", "priority": 1, "when": map[string]any{"kind": "event", "source": "lifecycle", "exact": map[string]any{"event": "exit"}},
			"target": map[string]any{"kind": "finish", "outcome": "passed"}}}}}}
	r := cli(t, captureEnv(t, work), "capture-process", writeScenario(t, work, "touch launched", func(m map[string]any) { m["reactive"] = graph }))
	if r.status == 0 || r.stdout != "" {
		t.Fatalf("accepted: %d %s", r.status, r.stdout)
	}
	e := decode[cliErr](t, r.stderr)
	var issues []evidenceIssue
	json.Unmarshal(e.Details, &issues)
	if e.Code != "preflight_refused" || len(issues) != 1 || issues[0].Path != "$.reactive.states[0].on[0].when.source" || issues[0].Code != "refused_source" {
		t.Fatalf("error %+v issues %+v", e, issues)
	}
	if _, err := os.Stat(filepath.Join(work, "launched")); !os.IsNotExist(err) {
		t.Fatalf("the target ran: %v", err)
	}
}
