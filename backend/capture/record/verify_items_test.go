package record

import (
	"encoding/json"
	"testing"

	"github.com/gatehouse/gatehouse/backend/evidence"
)

// minimalRecord is a valid record with one of each observation Verify's
// item checks read, built without running anything.
func minimalRecord(t *testing.T) map[string]any {
	t.Helper()
	scenario := map[string]any{"executable": "/bin/sh", "arguments": []any{}, "environment": map[string]any{}}
	contract := map[string]any{"environment_names": []any{}}
	digest := func(v any) string {
		d, err := evidence.Digest(v)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	zero := 0
	rec := Record{
		SchemaVersion: SchemaVersion,
		Manifest: Manifest{StartedAt: "2026-01-01T00:00:00.000Z", CompletedAt: "2026-01-01T00:00:01.000Z",
			ExecutableSHA256:   "0000000000000000000000000000000000000000000000000000000000000000",
			FullScenarioSHA256: digest(scenario), ComparisonContractSHA256: digest(contract),
			NormalizationSHA256: digest(map[string]any{}), ShimPlanSHA256: digest([]any{}), ReplayPlanSHA256: digest(nil)},
		Normalization:     json.RawMessage(`{}`),
		Frames:            []Frame{{Data: "hi"}},
		RenderedFrames:    []RenderedFrame{{Columns: 80, Rows: 24, ActiveBuffer: BufferNormal, Lines: []string{"hi"}}},
		InteractionEvents: []InteractionEvent{{Type: "input", Data: "x", Outcome: OutcomeDispatched}},
		Exit:              Exit{Code: &zero, Reason: ExitReasonExited},
		Settlement:        Settlement{State: SettlementQuiesced, CleanupOutcome: CleanupNotRequired},
		ProcessSamples:    []ProcessSample{{PID: 1, Command: "sh"}},
		FilesystemCheckpoints: []FilesystemCheckpoint{{Name: CheckpointBefore, Files: []FileState{}, Effects: []FileEffect{}},
			{Name: CheckpointAfterSettlement, Files: []FileState{}, Effects: []FileEffect{}}},
		ShimEvents: []json.RawMessage{}, ProtocolEvents: []json.RawMessage{}, ReplayTransitions: []json.RawMessage{},
		ReactiveRun: json.RawMessage(`null`), EventJournal: []JournalEntry{}, FilesBefore: []FileState{}, FilesAfter: []FileState{},
		FilesystemEffects: []FileEffect{}, Limitations: []string{}, ResidualUnknowns: []ResidualUnknown{},
		Cleanup: Cleanup{OwnedProcessGroup: OwnedProcessGroupVerified, TemporaryRoot: TemporaryRootRemoved},
	}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["manifest"].(map[string]any)["scenario"] = scenario
	m["manifest"].(map[string]any)["comparison_contract"] = contract
	m["manifest"].(map[string]any)["shim_plan"] = []any{}
	m["manifest"].(map[string]any)["replay_plan"] = nil
	route := 0
	m["shim_events"] = []any{ShimEvent{Command: "git", RouteIndex: &route, Arguments: []string{}, Outcome: ShimOutcomeUnmatched}}
	return m
}

func verifyTree(t *testing.T, m map[string]any) []Issue {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return Verify(b)
}

func TestMinimalRecordVerifies(t *testing.T) {
	if issues := verifyTree(t, minimalRecord(t)); len(issues) > 0 {
		t.Fatalf("%v", issues)
	}
}

// TestVerifyRejectsMalformedObservations: observations a reader (compare,
// the viewer) reads member by member are refused when a member is
// missing, unknown, of another type or outside its enumeration, each at
// its path. Checked to fail without items (verify_items.go): every case
// then verified.
func TestVerifyRejectsMalformedObservations(t *testing.T) {
	item := func(m map[string]any, list string) map[string]any {
		return m[list].([]any)[0].(map[string]any)
	}
	cases := []struct {
		name, path, code string
		mutate           func(m map[string]any)
	}{
		{"frame without data", "$.frames[0].data", CodeMissingField, func(m map[string]any) { delete(item(m, "frames"), "data") }},
		{"frame data a number", "$.frames[0].data", CodeWrongType, func(m map[string]any) { item(m, "frames")["data"] = 1 }},
		{"unknown frame member", "$.frames[0].extra", CodeUnknownField, func(m map[string]any) { item(m, "frames")["extra"] = 1 }},
		{"rendered lines not strings", "$.rendered_frames[0].lines[0]", CodeWrongType, func(m map[string]any) { item(m, "rendered_frames")["lines"] = []any{1} }},
		{"rendered buffer", "$.rendered_frames[0].active_buffer", CodeInvalidValue, func(m map[string]any) { item(m, "rendered_frames")["active_buffer"] = "other" }},
		{"rendered columns", "$.rendered_frames[0].columns", CodeWrongType, func(m map[string]any) { item(m, "rendered_frames")["columns"] = "80" }},
		{"interaction type", "$.interaction_events[0].type", CodeInvalidValue, func(m map[string]any) { item(m, "interaction_events")["type"] = "typing" }},
		{"interaction outcome", "$.interaction_events[0].outcome", CodeInvalidValue, func(m map[string]any) { item(m, "interaction_events")["outcome"] = "lost" }},
		{"sample pid", "$.process_samples[0].pid", CodeWrongType, func(m map[string]any) { item(m, "process_samples")["pid"] = nil }},
		{"sample group", "$.process_samples[0].process_group_id", CodeWrongType, func(m map[string]any) { item(m, "process_samples")["process_group_id"] = "1" }},
		{"shim arguments", "$.shim_events[0].arguments", CodeWrongType, func(m map[string]any) {
			m["shim_events"].([]any)[0] = map[string]any{"sequence": 0, "at_ms": 0, "command": "git", "route_index": nil, "arguments": "x", "working_directory": "", "outcome": "unmatched"}
		}},
		{"shim outcome", "$.shim_events[0].outcome", CodeInvalidValue, func(m map[string]any) {
			m["shim_events"].([]any)[0] = map[string]any{"sequence": 0, "at_ms": 0, "command": "git", "route_index": nil, "arguments": []any{}, "working_directory": "", "outcome": "maybe"}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := minimalRecord(t)
			tc.mutate(m)
			issues := verifyTree(t, m)
			for _, is := range issues {
				if is.Path == tc.path && is.Code == tc.code {
					return
				}
			}
			t.Fatalf("issues %v, want %s at %s", issues, tc.code, tc.path)
		})
	}
}
