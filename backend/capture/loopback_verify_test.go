package capture

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/gatehouse/gatehouse/backend/capture/record"
)

// lbMutate decodes rec, lets f change it and re-encodes it.
func lbMutate(t *testing.T, rec *Record, f func(m map[string]any)) json.RawMessage {
	t.Helper()
	m := decodeTree(t, mustJSON(t, rec))
	f(m)
	return mustJSON(t, m)
}

func lbItem(m map[string]any, list string, i int) map[string]any {
	return m[list].([]any)[i].(map[string]any)
}

type lbMutation struct {
	name, code, path string
	f                func(m map[string]any)
}

func lbRunMutations(t *testing.T, rec *Record, cases []lbMutation) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if issues := record.Verify(lbMutate(t, rec, c.f)); !hasIssue(issues, c.code, c.path) {
				t.Errorf("want %s at %s; got %v", c.code, c.path, IssueList(issues))
			}
		})
	}
}

func TestVerifyRejectsMutatedStaticReplay(t *testing.T) {
	lbNeedTool(t, "curl")
	script := `u="$GATEHOUSE_REPLAY_HTTP_URL"
curl -sS "$u/hello"; curl -sS "$u/hello"; curl -sS -X POST --data 'pw=hunter2' "$u/login"`
	sc, opts := shScenario(t, script, func(m obj) {
		m["replay"] = obj{"http": []any{
			obj{"method": "GET", "path": "/hello", "response": obj{"body": "hi"}},
			obj{"method": "POST", "path": "/login", "response": obj{"body": "ok"}},
		}}
	})
	sup := newSupervisor(t)
	rec, err := Capture(context.Background(), sup, sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	checkRecord(t, rec, opts) // the genuine record verifies
	if got := lbEventLines(lbProtocolEvents(t, rec)); len(got) != 6 || got[2] != "http request GET /hello exhausted" {
		t.Fatalf("events %v", got)
	}
	lbRunMutations(t, rec, []lbMutation{
		{"body in the clear", record.CodeUnredactedBody, "$.protocol_events[4].data",
			func(m map[string]any) { lbItem(m, "protocol_events", 4)["data"] = "pw=hunter2" }},
		{"unknown outcome", CodeInvalidValue, "$.protocol_events[0].outcome",
			func(m map[string]any) { lbItem(m, "protocol_events", 0)["outcome"] = "committed" }},
		{"bad status", CodeInvalidValue, "$.protocol_events[1].outcome",
			func(m map[string]any) { lbItem(m, "protocol_events", 1)["outcome"] = "2000" }},
		{"bad protocol", CodeInvalidValue, "$.protocol_events[1].protocol",
			func(m map[string]any) { lbItem(m, "protocol_events", 1)["protocol"] = "ftp" }},
		{"extra member", CodeUnknownField, "$.protocol_events[1].status",
			func(m map[string]any) { lbItem(m, "protocol_events", 1)["status"] = 200 }},
		{"missing member", CodeMissingField, "$.protocol_events[1].data",
			func(m map[string]any) { delete(lbItem(m, "protocol_events", 1), "data") }},
		{"http message", record.CodeReplayMismatch, "$.protocol_events[1].direction",
			func(m map[string]any) { lbItem(m, "protocol_events", 1)["direction"] = "sent" }},
		{"over max_calls", record.CodeReplayOveruse, "$.protocol_events[2]",
			func(m map[string]any) { lbItem(m, "protocol_events", 2)["outcome"] = "matched" }},
		{"response first", record.CodeReplayMismatch, "$.protocol_events[0]",
			func(m map[string]any) {
				a, b := lbItem(m, "protocol_events", 0), lbItem(m, "protocol_events", 1)
				a["direction"], b["direction"] = "response", "request"
				a["outcome"], b["outcome"] = "200", "matched"
			}},
		{"sequence", record.CodeSequenceGap, "$.protocol_events[1].sequence",
			func(m map[string]any) { lbItem(m, "protocol_events", 1)["sequence"] = 7 }},
		{"time goes back", record.CodeTimeOrder, "$.protocol_events[5].at_ms",
			func(m map[string]any) {
				lbItem(m, "protocol_events", 4)["at_ms"] = 1_000_000
			}},
		{"dropped event", record.CodeJournalMismatch, "$.event_journal",
			func(m map[string]any) { m["protocol_events"] = m["protocol_events"].([]any)[:5] }},
		{"invented transition", record.CodeUnexpectedReplay, "$.replay_transitions",
			func(m map[string]any) {
				m["replay_transitions"] = []any{map[string]any{"sequence": 0, "at_ms": 0, "transition_id": "x", "state_before": "a", "state_after": "b", "sensitive_aliases": []any{}}}
			}},
	})
	// A record whose scenario has no replay holds no protocol events.
	plain, popts := shScenario(t, "true", nil)
	none, err := Capture(context.Background(), sup, plain, popts)
	if err != nil {
		t.Fatal(err)
	}
	if issues := record.Verify(lbMutate(t, none, func(m map[string]any) {
		m["protocol_events"] = []any{lbItem(lbDecode(t, rec), "protocol_events", 0)}
	})); !hasIssue(issues, record.CodeUnexpectedReplay, "$.protocol_events") {
		t.Errorf("protocol events without replay: %v", IssueList(issues))
	}
}

func lbDecode(t *testing.T, rec *Record) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(lbMutate(t, rec, func(map[string]any) {}), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestVerifyRejectsMutatedMachineReplay(t *testing.T) {
	feed := lbFeedCommand(t)
	script := `u="$GATEHOUSE_REPLAY_HTTP_URL"
c() { curl -sS --max-time 5 "$@"; echo; }
c -X POST -H "Authorization: Bearer abc" "$u/login"
c -H "Authorization: Bearer abc" "$u/me"
` + feed + `
c -X POST -H "Authorization: Bearer abc" "$u/logout"
`
	sc, opts := shScenario(t, script, func(m obj) {
		m["timeout_ms"] = 15000
		m["replay"] = obj{"machine": lbLoginMachine()}
	})
	rec := capture(t, sc, opts)
	if n := len(rec.ReplayTransitions); n != 5 {
		t.Fatalf("%d transitions: %s", n, lbEventLines(lbProtocolEvents(t, rec)))
	}
	lbRunMutations(t, rec, []lbMutation{
		{"wrong edge", record.CodeReplayMismatch, "$.replay_transitions[1]",
			func(m map[string]any) { lbItem(m, "replay_transitions", 1)["state_after"] = "signed_out" }},
		{"broken chain", record.CodeReplayMismatch, "$.replay_transitions[0].state_before",
			func(m map[string]any) {
				t := lbItem(m, "replay_transitions", 0)
				t["transition_id"], t["state_before"], t["state_after"] = "me", "signed_in", "signed_in"
			}},
		{"unknown transition", record.CodeReplayMismatch, "$.replay_transitions[2].transition_id",
			func(m map[string]any) { lbItem(m, "replay_transitions", 2)["transition_id"] = "teleport" }},
		{"alias dropped", record.CodeReplayMismatch, "$.replay_transitions[0].sensitive_aliases",
			func(m map[string]any) { lbItem(m, "replay_transitions", 0)["sensitive_aliases"] = []any{} }},
		{"over max_uses", record.CodeReplayOveruse, "$.replay_transitions[3]",
			func(m map[string]any) {
				t := lbItem(m, "replay_transitions", 2)
				t["transition_id"] = "me" // "me" allows 2 uses: transitions 1, 2 and 3 are now all "me"
				lbItem(m, "replay_transitions", 3)["transition_id"] = "me"
				lbItem(m, "replay_transitions", 3)["state_after"] = "signed_in"
			}},
		{"missing transition", record.CodeReplayMismatch, "$.replay_transitions",
			func(m map[string]any) { m["replay_transitions"] = m["replay_transitions"].([]any)[:4] }},
		{"static outcome in a machine run", CodeInvalidValue, "$.protocol_events[0].outcome",
			func(m map[string]any) { lbItem(m, "protocol_events", 0)["outcome"] = "matched" }},
	})
}
