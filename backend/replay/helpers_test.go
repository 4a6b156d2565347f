package replay

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testjson"
)

type obj = map[string]any

func httpTrig(method, path string) obj {
	return obj{"protocol": "http", "method": method, "path": path}
}

func resp(status int, body string) obj {
	return obj{"type": "http_response", "status": status, "body": body}
}

func hdr(name string) obj { return obj{"source": "request_header", "name": name} }

func jsonSrc(kind string, path ...any) obj {
	if path == nil {
		path = []any{}
	}
	return obj{"source": kind, "path": path}
}

// baseMachine is start -GET /a-> mid -GET /b-> done (terminal).
func baseMachine() obj {
	return obj{
		"initial_state": "start",
		"states":        []any{obj{"name": "start"}, obj{"name": "mid"}, obj{"name": "done", "terminal": true}},
		"transitions": []any{
			obj{"id": "t1", "from": "start", "to": "mid", "trigger": httpTrig("GET", "/a"), "actions": []any{resp(200, "a")}, "max_uses": 1},
			obj{"id": "t2", "from": "mid", "to": "done", "trigger": httpTrig("GET", "/b"), "actions": []any{resp(200, "b")}, "max_uses": 1},
		},
		"max_transitions": 10,
	}
}

// tr returns transition i of machine m.
func tr(m obj, i int) obj { return m["transitions"].([]any)[i].(obj) }

// st returns state i of machine m.
func st(m obj, i int) obj { return m["states"].([]any)[i].(obj) }

func addTransition(m obj, t obj) { m["transitions"] = append(m["transitions"].([]any), t) }

func addState(m obj, s obj) { m["states"] = append(m["states"].([]any), s) }

// sensitiveCaptureMachine is loopMachine whose transition "cap" (POST
// /c, up to maxUses times) captures request header x-key as the sensitive
// variable key, allowing maxTransitions transitions and every connection
// the bound allows.
func sensitiveCaptureMachine(maxUses, maxTransitions int) obj {
	m := loopMachine(obj{"id": "cap", "trigger": httpTrig("POST", "/c"),
		"captures": []any{obj{"variable": "key", "value": hdr("x-key"), "sensitive": true}},
		"actions":  []any{resp(200, "ok")}, "max_uses": maxUses})
	m["max_transitions"] = maxTransitions
	m["limits"] = obj{"connections": MaxLimitConnections}
	return m
}

// keyedEvents is n POST /c requests on connection "one", request i with
// header x-key fmt.Sprintf(format, i).
func keyedEvents(n int, format string) []any {
	events := make([]any, n)
	for i := range events {
		e := req("POST", "/c")
		e["connection"] = "one"
		e["headers"] = obj{"x-key": fmt.Sprintf(format, i)}
		events[i] = e
	}
	return events
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	return testjson.Marshal(t, v)
}

func hasIssue(is []Issue, code, path string) bool {
	for _, i := range is {
		if i.Code == code && i.Path == path {
			return true
		}
	}
	return false
}

func issuesString(is []Issue) string {
	var b strings.Builder
	for _, i := range is {
		fmt.Fprintf(&b, "\n  %s", i)
	}
	return b.String()
}

// execute parses {machine, events} and runs it, failing on any issue.
func execute(t testing.TB, machine obj, events []any) Result {
	t.Helper()
	run, is := ParseRun(mustJSON(t, obj{"machine": machine, "events": events}))
	if len(is) > 0 {
		t.Fatalf("run rejected:%s", issuesString(is))
	}
	res, err := Execute(run)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func outcomes(res Result) []string {
	out := make([]string, len(res.Decisions))
	for i, d := range res.Decisions {
		out[i] = d.Outcome
	}
	return out
}

func journalIDs(res Result) []string {
	out := make([]string, len(res.TransitionJournal))
	for i, e := range res.TransitionJournal {
		out[i] = e.TransitionID
	}
	return out
}

func req(method, path string) obj {
	return obj{"type": "http_request", "method": method, "path": path}
}

func wantOutcomes(t *testing.T, res Result, want ...string) {
	t.Helper()
	got := outcomes(res)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("outcomes %v, want %v", got, want)
	}
}
