package capture

import (
	"fmt"
	"strings"
	"testing"
)

func TestScenarioLimitAndNormalizationRules(t *testing.T) {
	var cases []ruleCase
	for key, max := range map[string]int{
		"output_bytes": 10_000_000, "frames": 100_000, "files": 100_000, "file_bytes": 100_000_000,
		"processes": 10_000, "protocol_events": 100_000, "protocol_body_bytes": 10_000_000,
		"connections": 1000, "filesystem_depth": 64,
	} {
		cases = append(cases,
			ruleCase{key + " max", setIn("limits", key, max), "", ""},
			ruleCase{key + " max+1", setIn("limits", key, max+1), CodeOutOfRange, "$.limits." + key},
			ruleCase{key + " 1", setIn("limits", key, 1), "", ""},
			ruleCase{key + " 0", setIn("limits", key, 0), CodeOutOfRange, "$.limits." + key},
		)
	}
	pat := func(p, r string) func(obj) {
		return setIn("normalization", "patterns", []any{obj{"pattern": p, "replacement": r}})
	}
	pats := func(n int) []any {
		return list(n, func(i int) any { return obj{"pattern": fmt.Sprintf("p%d", i), "replacement": ""} })
	}
	cases = append(cases,
		ruleCase{"limits unknown", setIn("limits", "bytes", 1), CodeUnknownField, "$.limits.bytes"},
		ruleCase{"bucket 1", setIn("normalization", "time_bucket_ms", 1), "", ""},
		ruleCase{"bucket 60000", setIn("normalization", "time_bucket_ms", 60000), "", ""},
		ruleCase{"bucket 0", setIn("normalization", "time_bucket_ms", 0), CodeOutOfRange, "$.normalization.time_bucket_ms"},
		ruleCase{"bucket 60001", setIn("normalization", "time_bucket_ms", 60001), CodeOutOfRange, "$.normalization.time_bucket_ms"},
		ruleCase{"paths false", setIn("normalization", "paths", false), "", ""},
		ruleCase{"pids string", setIn("normalization", "pids", "no"), CodeWrongType, "$.normalization.pids"},
		ruleCase{"patterns 32", setIn("normalization", "patterns", pats(32)), "", ""},
		ruleCase{"patterns 33", setIn("normalization", "patterns", pats(33)), CodeTooManyEntries, "$.normalization.patterns"},
		ruleCase{"pattern 500", pat(strings.Repeat("a", 500), "x"), "", ""},
		ruleCase{"pattern 501", pat(strings.Repeat("a", 501), "x"), CodeInvalidLength, "$.normalization.patterns[0].pattern"},
		ruleCase{"pattern empty", pat("", "x"), CodeInvalidLength, "$.normalization.patterns[0].pattern"},
		ruleCase{"pattern invalid", pat("a(", "x"), CodeInvalidPattern, "$.normalization.patterns[0].pattern"},
		ruleCase{"replacement 100", pat("a", strings.Repeat("r", 100)), "", ""},
		ruleCase{"replacement 101", pat("a", strings.Repeat("r", 101)), CodeInvalidLength, "$.normalization.patterns[0].replacement"},
		ruleCase{"replacement missing", setIn("normalization", "patterns", []any{obj{"pattern": "a"}}), CodeMissingField, "$.normalization.patterns[0].replacement"},
		ruleCase{"normalization unknown", setIn("normalization", "hosts", true), CodeUnknownField, "$.normalization.hosts"},
	)
	runRules(t, cases)
}

func TestScenarioReplayRules(t *testing.T) {
	machine := lbValidMachine()
	runRules(t, []ruleCase{
		{"machine alone", setIn("replay", "machine", machine), "", ""},
		{"machine null", setIn("replay", "machine", nil), "", ""},
		{"static alone", func(m obj) {
			m["replay"] = obj{"http": []any{obj{"method": "GET", "path": "/"}}, "websocket_messages": []any{obj{"path": "/ws"}}, "websocket_connections": []any{obj{"path": "/ws"}}}
		}, "", ""},
		{"machine and http", func(m obj) { m["replay"] = obj{"machine": machine, "http": []any{obj{}}} }, CodeConflict, "$.replay.machine"},
		{"machine and ws messages", func(m obj) { m["replay"] = obj{"machine": machine, "websocket_messages": []any{obj{}}} }, CodeConflict, "$.replay.machine"},
		{"machine and ws connections", func(m obj) { m["replay"] = obj{"machine": machine, "websocket_connections": []any{obj{}}} }, CodeConflict, "$.replay.machine"},
		{"machine and empty scripts", func(m obj) { m["replay"] = obj{"machine": machine, "http": []any{}} }, "", ""},
		{"machine string", setIn("replay", "machine", "m"), CodeWrongType, "$.replay.machine"},
		{"http element", setIn("replay", "http", []any{1}), CodeWrongType, "$.replay.http[0]"},
		{"replay unknown", setIn("replay", "tcp", []any{}), CodeUnknownField, "$.replay.tcp"},
		{"replay null", set("replay", nil), CodeWrongType, "$.replay"},
	})
}

func TestScenarioDocumentRules(t *testing.T) {
	cases := []struct {
		name, doc, code, path string
	}{
		{"empty", ``, CodeInvalidJSON, "$"},
		{"array", `[]`, CodeWrongType, "$"},
		{"two objects", `{"approved":true} {}`, CodeInvalidJSON, "$"},
		{"trailing garbage", `{"approved":true,"executable":"/x","working_directory":"/"} x`, CodeInvalidJSON, "$"},
		{"invalid utf8", "{\"approved\":true,\"executable\":\"/\xff\"}", CodeInvalidUTF8, "$"},
		{"duplicate top", `{"approved":true,"approved":true,"executable":"/x","working_directory":"/"}`, CodeDuplicateKey, "$.approved"},
		{"duplicate in opaque", `{"approved":true,"executable":"/x","working_directory":"/","reactive":{"a":{"b":1,"b":2}}}`, CodeDuplicateKey, "$.reactive.a.b"},
		{"duplicate env", `{"approved":true,"executable":"/x","working_directory":"/","environment":{"A":"1","A":"2"}}`, CodeDuplicateKey, "$.environment.A"},
		{"lone surrogate", `{"approved":true,"executable":"/x\ud800","working_directory":"/"}`, CodeInvalidString, "$.executable"},
		{"huge number", `{"approved":true,"executable":"/x","working_directory":"/","reactive":{"n":1e400}}`, CodeInexactNumber, "$.reactive.n"},
		{"inexact integer", `{"approved":true,"executable":"/x","working_directory":"/","reactive":{"n":9007199254740993}}`, CodeInexactNumber, "$.reactive.n"},
		{"too deep", `{"approved":true,"executable":"/x","working_directory":"/","reactive":{"a":` + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + `}}`, CodeTooDeep, "$.reactive.a" + strings.Repeat("[0]", MaxDepth-2)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc, issues := ParseScenario([]byte(tc.doc))
			if sc != nil {
				t.Fatal("accepted")
			}
			if !hasIssue(issues, tc.code, tc.path) {
				t.Fatalf("want %s at %s; got %v", tc.code, tc.path, IssueList(issues))
			}
		})
	}
	// The deepest value a scenario admits: an event trigger's exact value
	// (a reactive trigger's payload field) at depth MaxDepth.
	deepOK := `{"approved":true,"executable":"/x","working_directory":"/","reactive":{"version":1,"initial_state":"s","deadline_ms":10,` +
		`"states":[{"id":"s","deadline_ms":10,"on":[{"id":"t","priority":1,"target":{"kind":"finish","outcome":"passed"},` +
		`"when":{"kind":"event","source":"terminal_raw","exact":{"data":` + strings.Repeat("[", MaxDepth-8) + strings.Repeat("]", MaxDepth-8) + `}}}]}]}}`
	if _, issues := ParseScenario([]byte(deepOK)); len(issues) > 0 {
		t.Fatalf("nesting at MaxDepth rejected: %v", IssueList(issues))
	}
	big := make([]byte, MaxScenarioBytes+1)
	if _, issues := ParseScenario(big); len(issues) != 1 || issues[0].Code != CodeTooLarge {
		t.Fatalf("oversized input: %v", issues)
	}
}
