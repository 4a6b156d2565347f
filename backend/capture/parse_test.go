package capture

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testjson"
)

// obj is a scenario (or part of one) under construction.
type obj = map[string]any

func minimal() obj {
	return obj{"approved": true, "executable": "/bin/sh", "working_directory": "/tmp"}
}

func list(n int, f func(i int) any) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	return testjson.Marshal(t, v)
}

func input(at int) obj { return obj{"type": "input", "at_ms": at, "data": "x"} }

func route() obj {
	return obj{"arguments": []any{}, "outputs": []any{}, "termination": obj{"type": "exit", "code": 0}}
}

func shim(name string) obj { return obj{"name": name, "routes": []any{route()}} }

func checkpoint(name string) obj { return obj{"name": name, "trigger": obj{"type": "root_exit"}} }

// ruleCase edits the minimal scenario; code "" means it must be accepted,
// otherwise an issue with that code at path must be reported.
type ruleCase struct {
	name       string
	edit       func(m obj)
	code, path string
}

func set(key string, v any) func(obj) { return func(m obj) { m[key] = v } }

func setIn(outer, key string, v any) func(obj) {
	return func(m obj) { m[outer] = obj{key: v} }
}

func runRules(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := minimal()
			tc.edit(m)
			sc, issues := ParseScenario(mustJSON(t, m))
			if tc.code == "" {
				if len(issues) > 0 || sc == nil {
					t.Fatalf("rejected: %v", IssueList(issues))
				}
				return
			}
			if sc != nil {
				t.Fatalf("accepted; want %s at %s", tc.code, tc.path)
			}
			if !hasIssue(issues, tc.code, tc.path) {
				t.Fatalf("want %s at %s; got %v", tc.code, tc.path, IssueList(issues))
			}
		})
	}
}

func TestScenarioTopLevelRules(t *testing.T) {
	strs := func(n int, f string) []any { return list(n, func(i int) any { return fmt.Sprintf(f, i) }) }
	env := func(n int) obj {
		e := obj{}
		for i := range n {
			e[fmt.Sprintf("S%d", i)] = "v"
		}
		return e
	}
	runRules(t, []ruleCase{
		{"minimal", func(obj) {}, "", ""},
		{"approved missing", func(m obj) { delete(m, "approved") }, CodeMissingField, "$.approved"},
		{"approved false", set("approved", false), CodeInvalidValue, "$.approved"},
		{"approved string", set("approved", "true"), CodeWrongType, "$.approved"},
		{"executable missing", func(m obj) { delete(m, "executable") }, CodeMissingField, "$.executable"},
		{"executable relative", set("executable", "bin/sh"), CodeRelativePath, "$.executable"},
		{"executable empty", set("executable", ""), CodeRelativePath, "$.executable"},
		{"executable NUL", set("executable", "/bin/s\x00h"), CodeInvalidValue, "$.executable"},
		{"working_directory relative", set("working_directory", "."), CodeRelativePath, "$.working_directory"},
		{"working_directory missing", func(m obj) { delete(m, "working_directory") }, CodeMissingField, "$.working_directory"},
		{"arguments 256", set("arguments", strs(256, "a%d")), "", ""},
		{"arguments 257", set("arguments", strs(257, "a%d")), CodeTooManyEntries, "$.arguments"},
		{"arguments number", set("arguments", []any{1}), CodeWrongType, "$.arguments[0]"},
		{"arguments NUL", set("arguments", []any{"a", "b\x00"}), CodeInvalidValue, "$.arguments[1]"},
		{"arguments null", set("arguments", nil), CodeWrongType, "$.arguments"},
		{"environment ok", set("environment", obj{"PATH": "/bin", "_x1": ""}), "", ""},
		{"environment leading digit", set("environment", obj{"1A": "v"}), CodeInvalidName, `$.environment["1A"]`},
		{"environment dash", set("environment", obj{"A-B": "v"}), CodeInvalidName, `$.environment["A-B"]`},
		{"environment value type", set("environment", obj{"A": 1}), CodeWrongType, "$.environment.A"},
		{"environment value NUL", set("environment", obj{"A": "\x00"}), CodeInvalidValue, "$.environment.A"},
		{"environment not object", set("environment", []any{}), CodeWrongType, "$.environment"},
		{"reserved HOME", set("environment", obj{"HOME": "/x"}), CodeReservedName, "$.environment.HOME"},
		{"reserved TERM", set("environment", obj{"TERM": "x"}), CodeReservedName, "$.environment.TERM"},
		{"reserved run id", set("environment", obj{MarkerVariable: "x"}), CodeReservedName, "$.environment." + MarkerVariable},
		{"reserved http", set("environment", obj{"GATEHOUSE_REPLAY_HTTP_URL": "x"}), CodeReservedName, "$.environment.GATEHOUSE_REPLAY_HTTP_URL"},
		{"reserved ws", set("environment", obj{"GATEHOUSE_REPLAY_WEBSOCKET_URL": "x"}), CodeReservedName, "$.environment.GATEHOUSE_REPLAY_WEBSOCKET_URL"},
		{"reserved ledger", set("environment", obj{"GATEHOUSE_SHIM_LEDGER_URL": "x"}), CodeReservedName, "$.environment.GATEHOUSE_SHIM_LEDGER_URL"},
		{"inherit 64", set("inherit_environment", strs(64, "I%d")), "", ""},
		{"inherit 65", set("inherit_environment", strs(65, "I%d")), CodeTooManyEntries, "$.inherit_environment"},
		{"inherit duplicate", set("inherit_environment", []any{"A", "A"}), CodeDuplicateEntry, "$.inherit_environment[1]"},
		{"inherit reserved", set("inherit_environment", []any{"HOME"}), CodeReservedName, "$.inherit_environment[0]"},
		{"inherit bad name", set("inherit_environment", []any{"a b"}), CodeInvalidName, "$.inherit_environment[0]"},
		{"inherit also set", func(m obj) { m["environment"] = obj{"A": "1"}; m["inherit_environment"] = []any{"A"} }, CodeConflict, "$.inherit_environment[0]"},
		{"secrets 64", func(m obj) { m["environment"] = env(64); m["secret_aliases"] = strs(64, "S%d") }, "", ""},
		{"secrets 65", func(m obj) { m["environment"] = env(65); m["secret_aliases"] = strs(65, "S%d") }, CodeTooManyEntries, "$.secret_aliases"},
		{"secret without value", set("secret_aliases", []any{"TOKEN"}), CodeMissingSecret, "$.secret_aliases[0]"},
		{"secret empty value", func(m obj) { m["environment"] = obj{"T": ""}; m["secret_aliases"] = []any{"T"} }, CodeMissingSecret, "$.secret_aliases[0]"},
		{"secret duplicate", func(m obj) { m["environment"] = obj{"T": "x"}; m["secret_aliases"] = []any{"T", "T"} }, CodeDuplicateEntry, "$.secret_aliases[1]"},
		{"network host", set("network_access", "host"), "", ""},
		{"network none", set("network_access", "none"), CodeInvalidValue, "$.network_access"},
		{"roots 16", set("filesystem_roots", strs(16, "/r%d")), "", ""},
		{"roots 17", set("filesystem_roots", strs(17, "/r%d")), CodeTooManyEntries, "$.filesystem_roots"},
		{"roots relative", set("filesystem_roots", []any{"r"}), CodeRelativePath, "$.filesystem_roots[0]"},
		{"roots duplicate", set("filesystem_roots", []any{"/r", "/r"}), CodeDuplicateEntry, "$.filesystem_roots[1]"},
		{"unknown top-level", set("Approved", true), CodeUnknownField, "$.Approved"},
		{"unknown odd key", set("a b", 1), CodeUnknownField, `$["a b"]`},
		{"timeout 1", set("timeout_ms", 1), "", ""},
		{"timeout 300000", set("timeout_ms", 300000), "", ""},
		{"timeout 0", set("timeout_ms", 0), CodeOutOfRange, "$.timeout_ms"},
		{"timeout 300001", set("timeout_ms", 300001), CodeOutOfRange, "$.timeout_ms"},
		{"timeout fractional", set("timeout_ms", 1.5), CodeNotInteger, "$.timeout_ms"},
		{"timeout string", set("timeout_ms", "5"), CodeWrongType, "$.timeout_ms"},
		{"idle 300000", set("idle_timeout_ms", 300000), "", ""},
		{"idle 300001", set("idle_timeout_ms", 300001), CodeOutOfRange, "$.idle_timeout_ms"},
		{"idle 0", set("idle_timeout_ms", 0), CodeOutOfRange, "$.idle_timeout_ms"},
		{"settle 0", set("settle_ms", 0), "", ""},
		{"settle 10000", set("settle_ms", 10000), "", ""},
		{"settle 10001", set("settle_ms", 10001), CodeOutOfRange, "$.settle_ms"},
		{"settle -1", set("settle_ms", -1), CodeOutOfRange, "$.settle_ms"},
		{"reactive null", set("reactive", nil), "", ""},
		{"reactive graph", set("reactive", obj{"version": 1, "initial_state": "s", "deadline_ms": 30000, "states": []any{obj{"id": "s", "deadline_ms": 100,
			"on": []any{obj{"id": "t", "priority": 1, "when": obj{"kind": "terminal_text", "text": "x"}, "target": obj{"kind": "finish", "outcome": "passed"}}}}}}), "", ""},
		{"reactive invalid", set("reactive", obj{"version": 1, "states": []any{}}), CodeTooFewEntries, "$.reactive.states"},
		{"reactive after timeout", set("reactive", obj{"version": 1, "initial_state": "s", "deadline_ms": 30001, "states": []any{obj{"id": "s", "deadline_ms": 100,
			"on": []any{obj{"id": "t", "priority": 1, "when": obj{"kind": "terminal_text", "text": "x"}, "target": obj{"kind": "finish", "outcome": "passed"}}}}}}), "deadline_order", "$.reactive.deadline_ms"},
		{"reactive array", set("reactive", []any{}), CodeWrongType, "$.reactive"},
	})
}

func TestScenarioTerminalAndEventRules(t *testing.T) {
	events := func(n int) []any { return list(n, func(i int) any { return input(i) }) }
	runRules(t, []ruleCase{
		{"columns 1", setIn("terminal", "columns", 1), "", ""},
		{"columns 1000", setIn("terminal", "columns", 1000), "", ""},
		{"columns 0", setIn("terminal", "columns", 0), CodeOutOfRange, "$.terminal.columns"},
		{"columns 1001", setIn("terminal", "columns", 1001), CodeOutOfRange, "$.terminal.columns"},
		{"columns 80.0", setIn("terminal", "columns", 80.0), "", ""},
		{"rows 1000", setIn("terminal", "rows", 1000), "", ""},
		{"rows 1001", setIn("terminal", "rows", 1001), CodeOutOfRange, "$.terminal.rows"},
		{"scrollback 0", setIn("terminal", "scrollback", 0), "", ""},
		{"scrollback 10000", setIn("terminal", "scrollback", 10000), "", ""},
		{"scrollback 10001", setIn("terminal", "scrollback", 10001), CodeOutOfRange, "$.terminal.scrollback"},
		{"scrollback -1", setIn("terminal", "scrollback", -1), CodeOutOfRange, "$.terminal.scrollback"},
		{"terminal unknown", setIn("terminal", "colour", 1), CodeUnknownField, "$.terminal.colour"},
		{"terminal null", set("terminal", nil), CodeWrongType, "$.terminal"},
		{"events 1000", set("events", events(1000)), "", ""},
		{"events 1001", set("events", events(1001)), CodeTooManyEntries, "$.events"},
		{"events unsorted", set("events", []any{input(5), input(4)}), CodeNotSorted, "$.events[1].at_ms"},
		{"events ties", set("events", []any{input(5), input(5)}), "", ""},
		{"event at timeout", func(m obj) { m["timeout_ms"] = 100; m["events"] = []any{input(100)} }, "", ""},
		{"event after timeout", func(m obj) { m["timeout_ms"] = 100; m["events"] = []any{input(101)} }, CodeAfterTimeout, "$.events[0].at_ms"},
		{"event after default timeout", set("events", []any{input(30001)}), CodeAfterTimeout, "$.events[0].at_ms"},
		{"event negative", set("events", []any{input(-1)}), CodeOutOfRange, "$.events[0].at_ms"},
		{"event type unknown", set("events", []any{obj{"type": "paste", "at_ms": 0}}), CodeInvalidVariant, "$.events[0].type"},
		{"event type missing", set("events", []any{obj{"at_ms": 0}}), CodeMissingField, "$.events[0].type"},
		{"event not object", set("events", []any{"input"}), CodeWrongType, "$.events[0]"},
		{"input missing data", set("events", []any{obj{"type": "input", "at_ms": 0}}), CodeMissingField, "$.events[0].data"},
		{"input missing at_ms", set("events", []any{obj{"type": "input", "data": ""}}), CodeMissingField, "$.events[0].at_ms"},
		{"input sensitive", set("events", []any{obj{"type": "input", "at_ms": 0, "data": "pw", "sensitive": true}}), "", ""},
		{"input sensitive string", set("events", []any{obj{"type": "input", "at_ms": 0, "data": "pw", "sensitive": "yes"}}), CodeWrongType, "$.events[0].sensitive"},
		{"input foreign field", set("events", []any{obj{"type": "input", "at_ms": 0, "data": "", "rows": 3}}), CodeUnknownField, "$.events[0].rows"},
		{"resize 1000", set("events", []any{obj{"type": "resize", "at_ms": 0, "columns": 1000, "rows": 1}}), "", ""},
		{"resize 1001", set("events", []any{obj{"type": "resize", "at_ms": 0, "columns": 1001, "rows": 1}}), CodeOutOfRange, "$.events[0].columns"},
		{"resize rows 0", set("events", []any{obj{"type": "resize", "at_ms": 0, "columns": 1, "rows": 0}}), CodeOutOfRange, "$.events[0].rows"},
		{"signal SIGKILL", set("events", []any{obj{"type": "signal", "at_ms": 0, "signal": "SIGKILL"}}), "", ""},
		{"signal SIGHUP", set("events", []any{obj{"type": "signal", "at_ms": 0, "signal": "SIGHUP"}}), CodeInvalidValue, "$.events[0].signal"},
		{"signal missing", set("events", []any{obj{"type": "signal", "at_ms": 0}}), CodeMissingField, "$.events[0].signal"},
	})
}

func TestScenarioCheckpointRules(t *testing.T) {
	cps := func(n int) []any { return list(n, func(i int) any { return checkpoint(fmt.Sprintf("c%d", i)) }) }
	trig := func(tr obj) func(obj) { return set("checkpoints", []any{obj{"name": "c", "trigger": tr}}) }
	runRules(t, []ruleCase{
		{"64 checkpoints", set("checkpoints", cps(64)), "", ""},
		{"65 checkpoints", set("checkpoints", cps(65)), CodeTooManyEntries, "$.checkpoints"},
		{"name before", set("checkpoints", []any{checkpoint("before")}), CodeReservedName, "$.checkpoints[0].name"},
		{"name after_settlement", set("checkpoints", []any{checkpoint("after_settlement")}), CodeReservedName, "$.checkpoints[0].name"},
		{"duplicate name", set("checkpoints", []any{checkpoint("a"), checkpoint("a")}), CodeDuplicateEntry, "$.checkpoints[1].name"},
		{"name 64 chars", set("checkpoints", []any{checkpoint("a" + strings.Repeat("_-9", 21))}), "", ""},
		{"name 65 chars", set("checkpoints", []any{checkpoint("a" + strings.Repeat("b", 64))}), CodeInvalidName, "$.checkpoints[0].name"},
		{"name leading dash", set("checkpoints", []any{checkpoint("-a")}), CodeInvalidName, "$.checkpoints[0].name"},
		{"name dot", set("checkpoints", []any{checkpoint("a.b")}), CodeInvalidName, "$.checkpoints[0].name"},
		{"name missing", set("checkpoints", []any{obj{"trigger": obj{"type": "settled"}}}), CodeMissingField, "$.checkpoints[0].name"},
		{"trigger missing", set("checkpoints", []any{obj{"name": "a"}}), CodeMissingField, "$.checkpoints[0].trigger"},
		{"time 0", trig(obj{"type": "time", "at_ms": 0}), "", ""},
		{"time 300000", trig(obj{"type": "time", "at_ms": 300000}), "", ""},
		{"time 300001", trig(obj{"type": "time", "at_ms": 300001}), CodeOutOfRange, "$.checkpoints[0].trigger.at_ms"},
		{"time -1", trig(obj{"type": "time", "at_ms": -1}), CodeOutOfRange, "$.checkpoints[0].trigger.at_ms"},
		{"literal 1", trig(obj{"type": "terminal_literal", "value": "x"}), "", ""},
		{"literal 10000", trig(obj{"type": "terminal_literal", "value": strings.Repeat("é", 10000)}), "", ""},
		{"literal 10001", trig(obj{"type": "terminal_literal", "value": strings.Repeat("x", 10001)}), CodeInvalidLength, "$.checkpoints[0].trigger.value"},
		{"literal empty", trig(obj{"type": "terminal_literal", "value": ""}), CodeInvalidLength, "$.checkpoints[0].trigger.value"},
		{"occurrence 1000", trig(obj{"type": "terminal_literal", "value": "x", "occurrence": 1000}), "", ""},
		{"occurrence 1001", trig(obj{"type": "terminal_literal", "value": "x", "occurrence": 1001}), CodeOutOfRange, "$.checkpoints[0].trigger.occurrence"},
		{"occurrence 0", trig(obj{"type": "terminal_literal", "value": "x", "occurrence": 0}), CodeOutOfRange, "$.checkpoints[0].trigger.occurrence"},
		{"root_exit extra", trig(obj{"type": "root_exit", "at_ms": 1}), CodeUnknownField, "$.checkpoints[0].trigger.at_ms"},
		{"settled", trig(obj{"type": "settled"}), "", ""},
		{"trigger unknown", trig(obj{"type": "exit"}), CodeInvalidVariant, "$.checkpoints[0].trigger.type"},
	})
}

func TestScenarioShimRules(t *testing.T) {
	withRoute := func(edit func(r obj)) func(obj) {
		r := route()
		edit(r)
		return set("command_shims", []any{obj{"name": "tool", "routes": []any{r}}})
	}
	out := func(i int) any { return obj{"at_ms": i, "stream": "stdout", "data": "x"} }
	runRules(t, []ruleCase{
		{"32 shims", set("command_shims", list(32, func(i int) any { return shim(fmt.Sprintf("s%d", i)) })), "", ""},
		{"33 shims", set("command_shims", list(33, func(i int) any { return shim(fmt.Sprintf("s%d", i)) })), CodeTooManyEntries, "$.command_shims"},
		{"duplicate name", set("command_shims", []any{shim("git"), shim("git")}), CodeDuplicateEntry, "$.command_shims[1].name"},
		{"name 128", set("command_shims", []any{shim("a" + strings.Repeat(".", 127))}), "", ""},
		{"name 129", set("command_shims", []any{shim("a" + strings.Repeat("b", 128))}), CodeInvalidName, "$.command_shims[0].name"},
		{"name slash", set("command_shims", []any{shim("a/b")}), CodeInvalidName, "$.command_shims[0].name"},
		{"name leading dot", set("command_shims", []any{shim(".a")}), CodeInvalidName, "$.command_shims[0].name"},
		{"routes 0", set("command_shims", []any{obj{"name": "a", "routes": []any{}}}), CodeTooFewEntries, "$.command_shims[0].routes"},
		{"routes missing", set("command_shims", []any{obj{"name": "a"}}), CodeMissingField, "$.command_shims[0].routes"},
		{"routes 100", set("command_shims", []any{obj{"name": "a", "routes": list(100, func(int) any { return route() })}}), "", ""},
		{"routes 101", set("command_shims", []any{obj{"name": "a", "routes": list(101, func(int) any { return route() })}}), CodeTooManyEntries, "$.command_shims[0].routes"},
		{"outputs 1000", withRoute(func(r obj) { r["outputs"] = list(1000, out) }), "", ""},
		{"outputs 1001", withRoute(func(r obj) { r["outputs"] = list(1001, out) }), CodeTooManyEntries, "$.command_shims[0].routes[0].outputs"},
		{"output stream", withRoute(func(r obj) { r["outputs"] = []any{obj{"at_ms": 0, "stream": "stdin", "data": ""}} }), CodeInvalidValue, "$.command_shims[0].routes[0].outputs[0].stream"},
		{"output at_ms 300001", withRoute(func(r obj) { r["outputs"] = []any{obj{"at_ms": 300001, "stream": "stderr", "data": ""}} }), CodeOutOfRange, "$.command_shims[0].routes[0].outputs[0].at_ms"},
		{"max_calls 1", withRoute(func(r obj) { r["max_calls"] = 1 }), "", ""},
		{"max_calls 100", withRoute(func(r obj) { r["max_calls"] = 100 }), "", ""},
		{"max_calls 0", withRoute(func(r obj) { r["max_calls"] = 0 }), CodeOutOfRange, "$.command_shims[0].routes[0].max_calls"},
		{"max_calls 101", withRoute(func(r obj) { r["max_calls"] = 101 }), CodeOutOfRange, "$.command_shims[0].routes[0].max_calls"},
		{"exit 255", withRoute(func(r obj) { r["termination"] = obj{"type": "exit", "code": 255} }), "", ""},
		{"exit 256", withRoute(func(r obj) { r["termination"] = obj{"type": "exit", "code": 256} }), CodeOutOfRange, "$.command_shims[0].routes[0].termination.code"},
		{"exit -1", withRoute(func(r obj) { r["termination"] = obj{"type": "exit", "code": -1} }), CodeOutOfRange, "$.command_shims[0].routes[0].termination.code"},
		{"signal termination", withRoute(func(r obj) { r["termination"] = obj{"type": "signal", "signal": "SIGTERM"} }), "", ""},
		{"signal termination bad", withRoute(func(r obj) { r["termination"] = obj{"type": "signal", "signal": "TERM"} }), CodeInvalidValue, "$.command_shims[0].routes[0].termination.signal"},
		{"termination missing", withRoute(func(r obj) { delete(r, "termination") }), CodeMissingField, "$.command_shims[0].routes[0].termination"},
		{"termination foreign", withRoute(func(r obj) { r["termination"] = obj{"type": "exit", "code": 0, "signal": "SIGINT"} }), CodeUnknownField, "$.command_shims[0].routes[0].termination.signal"},
		{"arguments NUL", withRoute(func(r obj) { r["arguments"] = []any{"\x00"} }), CodeInvalidValue, "$.command_shims[0].routes[0].arguments[0]"},
		{"route unknown", withRoute(func(r obj) { r["stdin"] = "" }), CodeUnknownField, "$.command_shims[0].routes[0].stdin"},
	})
}

func TestScenarioReportsEveryViolation(t *testing.T) {
	m := obj{
		"approved": false, "executable": "sh", "working_directory": "w",
		"terminal": obj{"columns": 0, "rows": 0}, "settle_ms": -1, "extra": 1,
	}
	_, issues := ParseScenario(mustJSON(t, m))
	want := []string{"$.approved", "$.executable", "$.working_directory", "$.terminal.columns", "$.terminal.rows", "$.settle_ms", "$.extra"}
	got := map[string]bool{}
	for _, is := range issues {
		got[is.Path] = true
	}
	for _, p := range want {
		if !got[p] {
			t.Errorf("no issue at %s; got %v", p, IssueList(issues))
		}
	}
	if len(issues) != len(want) {
		t.Errorf("got %d issues, want %d: %v", len(issues), len(want), IssueList(issues))
	}
}

func TestScenarioIssuesAreBounded(t *testing.T) {
	m := minimal()
	for i := range 150 {
		m[fmt.Sprintf("x%03d", i)] = i
	}
	_, issues := ParseScenario(mustJSON(t, m))
	if len(issues) != MaxIssues {
		t.Fatalf("got %d issues, want %d", len(issues), MaxIssues)
	}
	if last := issues[MaxIssues-1]; last.Code != CodeTooManyIssues {
		t.Fatalf("last issue %v", last)
	}
}

func TestScenarioDefaults(t *testing.T) {
	sc, issues := ParseScenario(mustJSON(t, minimal()))
	if len(issues) > 0 {
		t.Fatal(IssueList(issues))
	}
	got := string(mustJSON(t, sc))
	want := `{"approved":true,"executable":"/bin/sh","arguments":[],"working_directory":"/tmp","environment":{},` +
		`"inherit_environment":[],"secret_aliases":[],"network_access":"host","filesystem_roots":[],` +
		`"terminal":{"columns":80,"rows":24,"scrollback":1000},"events":[],"checkpoints":[],"command_shims":[],` +
		`"timeout_ms":30000,"idle_timeout_ms":30000,"settle_ms":100,` +
		`"limits":{"output_bytes":1000000,"frames":10000,"files":10000,"file_bytes":10000000,"processes":1000,` +
		`"protocol_events":10000,"protocol_body_bytes":1000000,"connections":100,"filesystem_depth":16},` +
		`"normalization":{"paths":true,"pids":true,"ports":true,"time_bucket_ms":10,"patterns":[]},` +
		`"replay":{"machine":null,"http":[],"websocket_messages":[],"websocket_connections":[]},"reactive":null}`
	if got != want {
		t.Fatalf("defaults:\n got %s\nwant %s", got, want)
	}
	sc, issues = ParseScenario(mustJSON(t, obj{
		"approved": true, "executable": "/bin/sh", "working_directory": "/tmp",
		"events":      []any{obj{"type": "input", "at_ms": 0, "data": "a"}},
		"checkpoints": []any{obj{"name": "c", "trigger": obj{"type": "terminal_literal", "value": "v"}}},
		"command_shims": []any{obj{"name": "s", "routes": []any{obj{
			"termination": obj{"type": "exit", "code": 0}}}}},
	}))
	if len(issues) > 0 {
		t.Fatal(IssueList(issues))
	}
	if sc.Events[0].Sensitive || sc.Checkpoints[0].Trigger.Occurrence != 1 || sc.CommandShims[0].Routes[0].MaxCalls != 1 ||
		sc.CommandShims[0].Routes[0].Arguments == nil || sc.CommandShims[0].Routes[0].Outputs == nil {
		t.Fatalf("nested defaults not applied: %+v", sc)
	}
}
