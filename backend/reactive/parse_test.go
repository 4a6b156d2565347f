package reactive

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// prompt is a valid two-state graph: answer "Name? " and pass on "hi ".
const prompt = `{"version":1,"initial_state":"ask","deadline_ms":5000,"states":[
 {"id":"ask","deadline_ms":2000,"on":[{"id":"answer","priority":1,"when":{"kind":"terminal_text","text":"Name? "},
   "actions":[{"type":"send_input","data":"bob\r"}],"target":{"kind":"goto","state":"greeted"}}]},
 {"id":"greeted","deadline_ms":2000,"on":[{"id":"done","priority":1,"when":{"kind":"terminal_text","text":"hi bob"},
   "target":{"kind":"finish","outcome":"passed"}}]}]}`

func mustParse(t *testing.T, doc string, ctx Context) *Scenario {
	t.Helper()
	sc, issues := Parse([]byte(doc), ctx)
	if len(issues) > 0 {
		t.Fatalf("Parse: %v", Issues(issues))
	}
	return sc
}

func TestParseDefaultsAndRoundTrip(t *testing.T) {
	sc := mustParse(t, prompt, Context{})
	tr := sc.States[0].On[0]
	if sc.States[0].MaxVisits != 1 || tr.MaxUses != 1 || tr.When.Occurrence != 1 || !tr.When.Consume ||
		tr.When.Since.Kind != SinceStateEntry || tr.Actions[0].Sensitive || len(sc.States[1].On[0].Actions) != 0 {
		t.Fatalf("defaults not applied: %+v", sc)
	}
	b, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	again := mustParse(t, string(b), Context{})
	b2, _ := json.Marshal(again)
	if string(b) != string(b2) {
		t.Fatalf("round trip differs:\n%s\n%s", b, b2)
	}
	if !reflect.DeepEqual(sc.SensitiveInputs(), []string(nil)) || sc.MaxDispatches() != 1 {
		t.Fatalf("SensitiveInputs %v MaxDispatches %d", sc.SensitiveInputs(), sc.MaxDispatches())
	}
}

// mutate parses prompt as a generic value, applies f and re-encodes it.
func mutate(t *testing.T, f func(m map[string]any)) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(prompt), &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func state(m map[string]any, i int) map[string]any {
	return m["states"].([]any)[i].(map[string]any)
}

func on(m map[string]any, i, j int) map[string]any {
	return state(m, i)["on"].([]any)[j].(map[string]any)
}

type obj = map[string]any

func TestParseRejections(t *testing.T) {
	text := func(s string) obj { return obj{"kind": "terminal_text", "text": s} }
	cases := []struct {
		name, code, path string
		f                func(m obj)
		ctx              Context
	}{
		{"version", CodeUnsupportedVersion, "$.version", func(m obj) { m["version"] = 2 }, Context{}},
		{"unknown top field", CodeUnknownField, "$.extra", func(m obj) { m["extra"] = 1 }, Context{}},
		{"missing deadline", CodeMissingField, "$.deadline_ms", func(m obj) { delete(m, "deadline_ms") }, Context{}},
		{"deadline range", CodeOutOfRange, "$.deadline_ms", func(m obj) { m["deadline_ms"] = 300001 }, Context{}},
		{"no states", CodeTooFewEntries, "$.states", func(m obj) { m["states"] = []any{} }, Context{}},
		{"bad state id", CodeInvalidName, "$.states[0].id", func(m obj) { state(m, 0)["id"] = "-x" }, Context{}},
		{"duplicate state", CodeDuplicateEntry, "$.states[1].id", func(m obj) { state(m, 1)["id"] = "ask" }, Context{}},
		{"unknown initial", CodeUnknownState, "$.initial_state", func(m obj) { m["initial_state"] = "nope" }, Context{}},
		{"unknown goto", CodeUnknownState, "$.states[0].on[0].target.state", func(m obj) { on(m, 0, 0)["target"] = obj{"kind": "goto", "state": "nope"} }, Context{}},
		{"finish outcome", CodeInvalidValue, "$.states[1].on[0].target.outcome", func(m obj) { on(m, 1, 0)["target"] = obj{"kind": "finish", "outcome": "failed"} }, Context{}},
		{"target kind", CodeInvalidVariant, "$.states[1].on[0].target.kind", func(m obj) { on(m, 1, 0)["target"] = obj{"kind": "jump"} }, Context{}},
		{"duplicate transition id", CodeDuplicateEntry, "$.states[1].on[0].id", func(m obj) { on(m, 1, 0)["id"] = "answer" }, Context{}},
		{"priority missing", CodeMissingField, "$.states[0].on[0].priority", func(m obj) { delete(on(m, 0, 0), "priority") }, Context{}},
		{"max_uses range", CodeOutOfRange, "$.states[0].on[0].max_uses", func(m obj) { on(m, 0, 0)["max_uses"] = 0 }, Context{}},
		{"max_visits range", CodeOutOfRange, "$.states[0].max_visits", func(m obj) { state(m, 0)["max_visits"] = 1001 }, Context{}},
		{"state deadline after scenario", CodeDeadlineOrder, "$.states[0].deadline_ms", func(m obj) { state(m, 0)["deadline_ms"] = 6000 }, Context{}},
		{"scenario deadline after timeout", CodeDeadlineOrder, "$.deadline_ms", func(m obj) {}, Context{TimeoutMS: 4000}},
		{"no transitions", CodeTooFewEntries, "$.states[1].on", func(m obj) { state(m, 1)["on"] = []any{} }, Context{}},
		{"unreachable", CodeUnreachableState, "$.states[2]", func(m obj) {
			m["states"] = append(m["states"].([]any), obj{"id": "lonely", "deadline_ms": 10, "on": []any{obj{"id": "x", "priority": 1, "when": text("x"), "target": obj{"kind": "finish", "outcome": "passed"}}}})
		}, Context{}},
		{"dead end", CodeDeadEnd, "$.states[1]", func(m obj) { on(m, 1, 0)["target"] = obj{"kind": "goto", "state": "greeted"} }, Context{}},
		{"ambiguous", CodeAmbiguousTransition, "$.states[0].on[1]", func(m obj) {
			state(m, 0)["on"] = append(state(m, 0)["on"].([]any), obj{"id": "again", "priority": 1, "when": text("Name? "), "target": obj{"kind": "goto", "state": "greeted"}})
		}, Context{}},
		{"trigger kind", CodeInvalidVariant, "$.states[0].on[0].when.kind", func(m obj) { on(m, 0, 0)["when"] = obj{"kind": "regex"} }, Context{}},
		{"empty text", CodeInvalidLength, "$.states[0].on[0].when.text", func(m obj) { on(m, 0, 0)["when"] = text("") }, Context{}},
		{"text too long", CodeInvalidLength, "$.states[0].on[0].when.text", func(m obj) { on(m, 0, 0)["when"] = text(strings.Repeat("é", MaxTextChars+1)) }, Context{}},
		{"occurrence", CodeOutOfRange, "$.states[0].on[0].when.occurrence", func(m obj) { on(m, 0, 0)["when"] = obj{"kind": "terminal_text", "text": "a", "occurrence": 1001} }, Context{}},
		{"any too few", CodeTooFewEntries, "$.states[0].on[0].when.of", func(m obj) { on(m, 0, 0)["when"] = obj{"kind": "any", "of": []any{text("a")}} }, Context{}},
		{"all too many", CodeTooManyEntries, "$.states[0].on[0].when.of", func(m obj) {
			var of []any
			for i := 0; i < 17; i++ {
				of = append(of, text(fmt.Sprint(i)))
			}
			on(m, 0, 0)["when"] = obj{"kind": "all", "of": of}
		}, Context{}},
		{"sequence empty", CodeTooFewEntries, "$.states[0].on[0].when.of", func(m obj) { on(m, 0, 0)["when"] = obj{"kind": "sequence", "of": []any{}} }, Context{}},
		{"repeat max below min", CodeOutOfRange, "$.states[0].on[0].when.max", func(m obj) { on(m, 0, 0)["when"] = obj{"kind": "repeat", "min": 3, "max": 2, "of": text("a")} }, Context{}},
		{"repeat max 65", CodeOutOfRange, "$.states[0].on[0].when.max", func(m obj) { on(m, 0, 0)["when"] = obj{"kind": "repeat", "min": 1, "max": 65, "of": text("a")} }, Context{}},
		{"trigger depth", CodeTooDeep, "$.states[0].on[0].when.of.of.of.of.of.of.of.of", func(m obj) {
			var w any = text("a")
			for i := 0; i < 8; i++ {
				w = obj{"kind": "repeat", "min": 1, "max": 1, "of": w}
			}
			on(m, 0, 0)["when"] = w
		}, Context{}},
		{"event source", CodeInvalidVariant, "$.states[0].on[0].when.source", func(m obj) { on(m, 0, 0)["when"] = obj{"kind": "event", "source": "stdout", "exact": obj{"data": "x"}} }, Context{}},
		{"event field", CodeUnknownField, "$.states[0].on[0].when.exact.name", func(m obj) { on(m, 0, 0)["when"] = obj{"kind": "event", "source": "shim", "exact": obj{"name": "x"}} }, Context{}},
		{"event exact empty", CodeTooFewEntries, "$.states[0].on[0].when.exact", func(m obj) { on(m, 0, 0)["when"] = obj{"kind": "event", "source": "shim", "exact": obj{}} }, Context{}},
		{"since kind", CodeInvalidVariant, "$.states[0].on[0].when.since.kind", func(m obj) {
			on(m, 0, 0)["when"] = obj{"kind": "terminal_text", "text": "a", "since": obj{"kind": "yesterday"}}
		}, Context{}},
		{"since event id", CodeInvalidName, "$.states[0].on[0].when.since.id", func(m obj) {
			on(m, 0, 0)["when"] = obj{"kind": "terminal_text", "text": "a", "since": obj{"kind": "event_id", "id": "frames[01]"}}
		}, Context{}},
		{"since unknown checkpoint", CodeUnknownCheckpoint, "$.states[0].on[0].when.since.name", func(m obj) {
			on(m, 0, 0)["when"] = obj{"kind": "terminal_text", "text": "a", "since": obj{"kind": "checkpoint", "name": "later"}}
		}, Context{}},
		{"action type", CodeInvalidVariant, "$.states[0].on[0].actions[0].type", func(m obj) { on(m, 0, 0)["actions"] = []any{obj{"type": "type"}} }, Context{}},
		{"empty input", CodeInvalidLength, "$.states[0].on[0].actions[0].data", func(m obj) { on(m, 0, 0)["actions"] = []any{obj{"type": "send_input", "data": ""}} }, Context{}},
		{"resize range", CodeOutOfRange, "$.states[0].on[0].actions[0].columns", func(m obj) { on(m, 0, 0)["actions"] = []any{obj{"type": "resize", "columns": 0, "rows": 5}} }, Context{}},
		{"signal name", CodeInvalidVariant, "$.states[0].on[0].actions[0].signal", func(m obj) { on(m, 0, 0)["actions"] = []any{obj{"type": "send_signal", "signal": "SIGHUP"}} }, Context{}},
		{"signal selector", CodeInvalidVariant, "$.states[0].on[0].actions[0].selector", func(m obj) {
			on(m, 0, 0)["actions"] = []any{obj{"type": "send_signal", "signal": "SIGINT", "selector": "pid"}}
		}, Context{}},
		{"checkpoint reserved", CodeReservedName, "$.states[0].on[0].actions[0].name", func(m obj) { on(m, 0, 0)["actions"] = []any{obj{"type": "checkpoint", "name": "before"}} }, Context{}},
		{"checkpoint clash", CodeDuplicateEntry, "$.states[0].on[0].actions[0].name", func(m obj) { on(m, 0, 0)["actions"] = []any{obj{"type": "checkpoint", "name": "mid"}} }, Context{Checkpoints: []string{"mid"}}},
		{"checkpoint twice", CodeDuplicateEntry, "$.states[1].on[0].actions[0].name", func(m obj) {
			on(m, 0, 0)["actions"] = []any{obj{"type": "checkpoint", "name": "cp"}}
			on(m, 1, 0)["actions"] = []any{obj{"type": "checkpoint", "name": "cp"}}
		}, Context{}},
		{"checkpoint reuse", CodeCheckpointReuse, "$.states[0].on[0].actions[0].name", func(m obj) {
			on(m, 0, 0)["actions"] = []any{obj{"type": "checkpoint", "name": "cp"}}
			on(m, 0, 0)["max_uses"] = 2
		}, Context{}},
		{"too many actions", CodeTooManyActions, "$.states", func(m obj) {
			var acts []any
			for i := 0; i < 16; i++ {
				acts = append(acts, obj{"type": "close_stdin"})
			}
			on(m, 0, 0)["actions"] = acts
			on(m, 0, 0)["max_uses"] = 1000
			state(m, 1)["max_visits"] = 1000
		}, Context{}},
		{"wrong type", CodeWrongType, "$.states[0].on[0].when", func(m obj) { on(m, 0, 0)["when"] = nil }, Context{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := mutate(t, c.f)
			sc, issues := Parse([]byte(doc), c.ctx)
			if sc != nil {
				t.Fatalf("accepted: %s", doc)
			}
			for _, is := range issues {
				if is.Code == c.code && is.Path == c.path {
					return
				}
			}
			t.Fatalf("want %s at %s; got %v", c.code, c.path, Issues(issues))
		})
	}
}

func TestParseDocumentErrors(t *testing.T) {
	for _, c := range []struct{ doc, code string }{
		{`{"version":1,"version":1}`, CodeDuplicateKey},
		{`{"version":1`, CodeInvalidJSON},
		{"\xff", CodeInvalidUTF8},
		{`[]`, CodeWrongType},
		{`{} x`, CodeInvalidJSON},
		{`{"version":1e400}`, CodeInexactNumber},
	} {
		_, issues := Parse([]byte(c.doc), Context{})
		if len(issues) == 0 || issues[0].Code != c.code {
			t.Errorf("%q: want %s, got %v", c.doc, c.code, issues)
		}
	}
	big := make([]byte, MaxInputBytes+1)
	if _, issues := Parse(big, Context{}); len(issues) != 1 || issues[0].Code != CodeTooLarge {
		t.Errorf("oversized: %v", issues)
	}
}

func TestParseAcceptsEveryShape(t *testing.T) {
	doc := mutate(t, func(m obj) {
		on(m, 0, 0)["when"] = obj{"kind": "all", "of": []any{
			obj{"kind": "any", "of": []any{obj{"kind": "terminal_text", "text": "a", "since": obj{"kind": "scenario_start"}, "consume": false},
				obj{"kind": "event", "source": "shim", "exact": obj{"command": "git", "route_index": 0}, "occurrence": 2, "since": obj{"kind": "checkpoint", "name": "cp"}}}},
			obj{"kind": "sequence", "of": []any{obj{"kind": "repeat", "min": 2, "max": 64, "of": obj{"kind": "terminal_text", "text": "b", "since": obj{"kind": "event_id", "id": "frames[0]"}}}}},
			obj{"kind": "event", "source": "terminal_rendered", "exact": obj{"lines": []any{"x"}}},
		}}
		on(m, 0, 0)["actions"] = []any{
			obj{"type": "send_input", "data": "pw\r", "sensitive": true}, obj{"type": "resize", "columns": 100, "rows": 30},
			obj{"type": "close_stdin"}, obj{"type": "send_signal", "signal": "SIGTERM", "selector": "process_group"},
		}
		on(m, 1, 0)["actions"] = []any{obj{"type": "checkpoint", "name": "cp"}}
	})
	sc := mustParse(t, doc, Context{})
	if got := sc.SensitiveInputs(); len(got) != 1 || got[0] != "pw\r" {
		t.Errorf("SensitiveInputs = %q", got)
	}
	if got := sc.CheckpointNames(); len(got) != 1 || got[0] != "cp" {
		t.Errorf("CheckpointNames = %q", got)
	}
	pre := Preflight(sc, "$.reactive", []string{"zzz"})
	want := map[string]string{
		"$.reactive.states[0].on[0].when.of[2].source":   CodeRefusedSource,
		"$.reactive.states[0].on[0].actions[3].selector": CodeRefusedSelector,
	}
	if len(pre) != len(want) {
		t.Fatalf("preflight: %v", pre)
	}
	for _, is := range pre {
		if want[is.Path] != is.Code {
			t.Errorf("unexpected preflight issue %v", is)
		}
	}
	if pre := Preflight(sc, "$", []string{"b"}); len(pre) != 4 || pre[0].Code != CodeUnmatchableText || pre[0].Path != "$.states[0].on[0].when.of[1].of[0].of.text" {
		t.Errorf("secret text not refused: %v", pre)
	}
}

func TestCheckWithAFullCollector(t *testing.T) {
	// The caller's collector is full already: the invalid repeat (no
	// "of") must still be noticed, not handed to the graph rules.
	l := strictjson.Collector{Max: 1}
	l.Add("$", "x", "full")
	doc := `{"version":1,"initial_state":"a","deadline_ms":10,"states":[{"id":"a","deadline_ms":10,"on":[{"id":"t","priority":1,` +
		`"when":{"kind":"repeat","min":1,"max":1},"target":{"kind":"finish","outcome":"passed"}}]}]}`
	var dl strictjson.Collector
	n := strictjson.Decode([]byte(doc), "$", options, &dl)
	if Check(n, "$", Context{}, &l) != nil {
		t.Fatal("accepted")
	}
}
