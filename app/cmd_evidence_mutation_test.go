package app

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/library"
	"github.com/gatehouse/gatehouse/internal/testjson"
)

// richCaptureEvidence captures a scenario with input, a resize, a shim
// call and a checkpoint, so every sequenced list of the record has at
// least two entries.
func richCaptureEvidence(t *testing.T) []byte {
	t.Helper()
	script := `printf 'name? '; read n; echo "hi $n"; codex --version; sleep 0.2; stty size; codex --version; echo bye`
	return captureEvidenceFile(t, script, func(m map[string]any) {
		m["terminal"] = map[string]any{"columns": 30, "rows": 4} // small screens: a small file to verify many times
		m["events"] = []any{
			map[string]any{"type": "input", "at_ms": 100, "data": "Ada\r"},
			map[string]any{"type": "resize", "at_ms": 200, "columns": 32, "rows": 5},
		}
		m["checkpoints"] = []any{map[string]any{"name": "greeted", "trigger": map[string]any{"type": "terminal_literal", "value": "hi Ada"}}}
		m["command_shims"] = []any{map[string]any{"name": "codex", "routes": []any{map[string]any{
			"arguments": []any{"--version"}, "outputs": []any{map[string]any{"at_ms": 0, "stream": "stdout", "data": "codex 1.2.3\n"}},
			"termination": map[string]any{"type": "exit", "code": 0}, "max_calls": 2,
		}}}}
	})
}

func decodeNumbers(t *testing.T, b []byte) map[string]any {
	t.Helper()
	return testjson.Object(t, b)
}

// flipHex changes the hex digit at i.
func flipHex(s string, i int) string {
	c := byte('0')
	if s[i] == '0' {
		c = '1'
	}
	return s[:i] + string(c) + s[i+1:]
}

// TestEvidenceVerifyRejectsEveryMutation runs `evidence verify` on a real
// capture changed in one way at a time: every byte of every commitment
// (with the envelope as written, and re-sealed so only the record's own
// commitments can catch it), every sequenced list reordered, and the
// after_settlement checkpoint missing.
func TestEvidenceVerifyRejectsEveryMutation(t *testing.T) {
	good := richCaptureEvidence(t)
	if status, issues := verifyIssues(t, good); status != 0 {
		t.Fatalf("the capture does not verify: %v", issues)
	}
	// edit re-marshals the envelope after f changed it; reseal also
	// recomputes its evidence_id.
	edit := func(reseal bool, f func(env, rec map[string]any)) []byte {
		t.Helper()
		env := decodeNumbers(t, good)
		rec := env["normalized_result"].(map[string]any)
		f(env, rec)
		b, err := json.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		if !reseal {
			return b
		}
		var e evidence.Envelope
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatal(err)
		}
		if err := evidence.Seal(&e); err != nil {
			t.Fatal(err)
		}
		out, err := json.Marshal(&e)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	// rejected checks library.Verify, what `evidence verify` runs, directly
	// (hundreds of times), and the first mutation of each kind through the
	// command itself.
	viaCLI := map[string]bool{}
	rejected := func(name string, data []byte, code, path string) {
		t.Helper()
		kind := strings.Fields(name)[0]
		if !viaCLI[kind] {
			viaCLI[kind] = true
			if status, issues := verifyIssues(t, data); status != 1 || !hasPath(issues, code, path) {
				t.Errorf("%s: evidence verify exits %d, want 1 with %s at %s: %v", name, status, code, path, issues)
			}
		}
		if res, issues := library.Verify(data); res.Valid || !hasPath(issues, code, path) {
			t.Errorf("%s: want %s at %s: %v", name, code, path, issues)
		}
	}
	manifest := decodeNumbers(t, good)["normalized_result"].(map[string]any)["manifest"].(map[string]any)
	t.Run("every byte of every commitment", func(t *testing.T) {
		recomputable := []string{"full_scenario_sha256", "comparison_contract_sha256", "normalization_sha256", "shim_plan_sha256", "replay_plan_sha256"}
		for _, key := range append(recomputable, "executable_sha256") {
			digest := manifest[key].(string)
			for i := range len(digest) {
				if testing.Short() && i%16 != 0 { // -short: a few bytes of each
					continue
				}
				set := func(_, rec map[string]any) { rec["manifest"].(map[string]any)[key] = flipHex(digest, i) }
				rejected(fmt.Sprintf("%s byte %d", key, i), edit(false, set), evidence.CodeIDMismatch, "$.evidence_id")
				if key != "executable_sha256" { // its file is not in the Evidence; see below
					rejected(fmt.Sprintf("%s byte %d re-sealed", key, i), edit(true, set), "commitment_mismatch", "$.normalized_result.manifest."+key)
				}
			}
		}
		id := decodeNumbers(t, good)["evidence_id"].(string)
		for i := len("ev_"); i < len(id); i++ {
			if testing.Short() && i%16 != 0 {
				continue
			}
			data := edit(false, func(env, _ map[string]any) { env["evidence_id"] = flipHex(id, i) })
			rejected(fmt.Sprintf("evidence_id byte %d", i), data, evidence.CodeIDMismatch, "$.evidence_id")
		}
	})
	t.Run("reordered sequences", func(t *testing.T) {
		for _, list := range []string{"frames", "rendered_frames", "interaction_events", "shim_events"} {
			data := edit(true, func(_, rec map[string]any) {
				a := rec[list].([]any)
				if len(a) < 2 {
					t.Fatalf("%s has %d entries", list, len(a))
				}
				a[0], a[1] = a[1], a[0]
			})
			rejected(list+" swapped", data, "sequence_gap", "$.normalized_result."+list+"[0].sequence")
		}
		data := edit(true, func(_, rec map[string]any) {
			j := rec["event_journal"].([]any)
			k := len(j) / 2
			j[k], j[k+1] = j[k+1], j[k]
		})
		n := len(decodeNumbers(t, good)["normalized_result"].(map[string]any)["event_journal"].([]any))
		rejected("event_journal swapped", data, "journal_mismatch", fmt.Sprintf("$.normalized_result.event_journal[%d].capture_order", n/2))
		data = edit(true, func(_, rec map[string]any) {
			cps := rec["filesystem_checkpoints"].([]any)
			cps[0], cps[1] = cps[1], cps[0]
		})
		rejected("checkpoints swapped", data, "checkpoint_order", "$.normalized_result.filesystem_checkpoints[0].name")
	})
	t.Run("missing after_settlement", func(t *testing.T) {
		data := edit(true, func(_, rec map[string]any) {
			cps := rec["filesystem_checkpoints"].([]any)
			rec["filesystem_checkpoints"] = cps[:len(cps)-1]
		})
		rejected("dropped", data, "checkpoint_order", "$.normalized_result.filesystem_checkpoints[1].name")
		data = edit(true, func(_, rec map[string]any) {
			cps := rec["filesystem_checkpoints"].([]any)
			cps[len(cps)-1].(map[string]any)["name"] = "after_settled"
		})
		rejected("renamed", data, "checkpoint_order", fmt.Sprintf("$.normalized_result.filesystem_checkpoints[%d].name",
			len(decodeNumbers(t, good)["normalized_result"].(map[string]any)["filesystem_checkpoints"].([]any))-1))
	})
	if strings.Contains(string(good), `"executable_sha256": "`+strings.Repeat("0", 64)) {
		t.Error("executable_sha256 is not a real digest")
	}
}
