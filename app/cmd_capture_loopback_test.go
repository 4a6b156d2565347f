package app

import (
	"os/exec"
	"testing"
)

// A capture with loopback replay, made and checked through the CLI:
// `evidence verify` accepts it and rejects it once a protocol event is
// changed, even when the envelope is re-sealed around the change.
func TestEvidenceVerifyLoopbackReplay(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	script := `curl -sS -X POST --data 'pw=hunter2' "$GATEHOUSE_REPLAY_HTTP_URL/login"; curl -sS "$GATEHOUSE_REPLAY_HTTP_URL/none"`
	good := captureEvidenceFile(t, script, func(m map[string]any) {
		m["replay"] = map[string]any{"http": []any{map[string]any{"method": "POST", "path": "/login", "response": map[string]any{"body": "ok"}}}}
	})
	if status, issues := verifyIssues(t, good); status != 0 {
		t.Fatalf("a fresh capture with replay does not verify: %v", issues)
	}
	reseal := func(f func(events []any)) []byte {
		t.Helper()
		return resealRecord(t, good, func(m map[string]any) {
			events := m["protocol_events"].([]any)
			if len(events) != 4 {
				t.Fatalf("protocol events %v", events)
			}
			f(events)
		})
	}
	for _, c := range []struct {
		name, code, path string
		f                func(events []any)
	}{
		{"request body in the clear", "unredacted_body", "$.normalized_result.protocol_events[0].data",
			func(ev []any) { ev[0].(map[string]any)["data"] = "pw=hunter2" }},
		{"unmatched turned matched", "replay_overuse", "$.normalized_result.protocol_events[2]",
			func(ev []any) {
				e := ev[2].(map[string]any)
				e["outcome"], e["method"], e["path"] = "matched", "POST", "/login"
			}},
		{"status rewritten", "invalid_value", "$.normalized_result.protocol_events[3].outcome",
			func(ev []any) { ev[3].(map[string]any)["outcome"] = "OK" }},
	} {
		status, issues := verifyIssues(t, reseal(c.f))
		if status != 1 || !hasPath(issues, c.code, c.path) {
			t.Errorf("%s: %d %v", c.name, status, issues)
		}
	}
}
