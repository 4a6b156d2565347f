package replay

import (
	"fmt"
	"strings"
	"testing"
)

// minimalMachine is start -> done with one self-loop on GET /l.
func minimalMachine() obj {
	return loopMachine(obj{"id": "loop", "trigger": httpTrig("GET", "/l"), "max_uses": 1})
}

func parseRunIssues(t *testing.T, machine obj, events []any) []Issue {
	t.Helper()
	run, is := ParseRun(mustJSON(t, obj{"machine": machine, "events": events}))
	if (run == nil) == (len(is) == 0) {
		t.Fatalf("run %v with issues %v", run, is)
	}
	return is
}

func TestRunEventBound(t *testing.T) {
	m := minimalMachine()
	m["limits"] = obj{"connections": MaxLimitConnections}
	events := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			e := req("GET", "/l")
			e["connection"] = "c"
			out[i] = e
		}
		return out
	}
	if is := parseRunIssues(t, m, events(MaxEvents)); len(is) > 0 {
		t.Fatalf("10,000 events:%s", issuesString(is))
	}
	res := execute(t, m, events(MaxEvents))
	if len(res.Decisions) != MaxEvents || res.Decisions[1].Outcome != OutcomeTransitionExhausted || res.Limits.Usage.Messages != MaxEvents {
		t.Fatalf("%d decisions, usage %+v", len(res.Decisions), res.Limits.Usage)
	}
	if is := parseRunIssues(t, m, events(MaxEvents+1)); !hasIssue(is, CodeTooManyEntries, "$.events") {
		t.Fatalf("10,001 events:%s", issuesString(is))
	}
}

func TestRunSensitiveCaptureBound(t *testing.T) {
	capture := func(n int) obj { return obj{"variable": fmt.Sprintf("s%d", n), "value": hdr("x-k"), "sensitive": true} }
	for _, tc := range []struct {
		name           string
		caps, maxUses  int
		maxTransitions int
		extra          bool // a second transition with one sensitive capture and max_uses 1
		ok             bool
		path           string
	}{
		{"1024 uses", 1, 1024, 5000, false, true, ""},
		{"1025 uses", 1, 1025, 5000, false, false, "$.machine.transitions[1].captures"},
		{"16 captures x 64 uses", 16, 64, 5000, false, true, ""},
		{"16 captures x 64 uses + 1", 16, 64, 5000, true, false, "$.machine.transitions[2].captures"},
		{"uses capped by max_transitions", 1, 100000, 1024, false, true, ""},
		{"uses capped by max_transitions + 1", 1, 100000, 1025, false, false, "$.machine.transitions[1].captures"},
		{"plain captures do not count", 0, 100000, 100000, false, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var caps []any
			for i := range tc.caps {
				caps = append(caps, capture(i))
			}
			if tc.caps == 0 {
				caps = []any{obj{"variable": "plain", "value": hdr("x-k")}}
			}
			m := loopMachine(obj{"id": "cap", "trigger": httpTrig("GET", "/c"), "captures": caps, "max_uses": tc.maxUses})
			if tc.extra {
				addTransition(m, obj{"id": "more", "from": "start", "to": "start", "trigger": httpTrig("GET", "/m"),
					"captures": []any{capture(99)}, "actions": []any{resp(200, "")}, "max_uses": 1})
			}
			m["max_transitions"] = tc.maxTransitions
			is := parseRunIssues(t, m, []any{})
			if tc.ok != (len(is) == 0) || !tc.ok && !hasIssue(is, CodeSensitiveCaptureExceeded, tc.path) {
				t.Fatalf("want ok=%v %s:%s", tc.ok, tc.path, issuesString(is))
			}
			// The bound belongs to the direct run, not to the machine.
			if _, is := ParseMachine(mustJSON(t, m)); len(is) > 0 {
				t.Fatalf("machine alone:%s", issuesString(is))
			}
		})
	}
}

func TestRunActionFieldBound(t *testing.T) {
	// An http_response with h headers has 1+h text fields.
	headers := func(n int) obj {
		h := obj{}
		for i := range n {
			h[fmt.Sprintf("x-h%d", i)] = "v"
		}
		return h
	}
	build := func(lastHeaders int, sends int) obj {
		m := loopMachine()
		// the exit transition already has one field (its body)
		tr(m, 0)["actions"] = []any{obj{"type": "http_response", "status": 200, "headers": headers(MaxHeaders - 1)}} // 64 fields
		for i := range 14 {
			addTransition(m, obj{"id": fmt.Sprintf("t%d", i), "from": "start", "to": "start", "trigger": httpTrig("GET", fmt.Sprintf("/p%d", i)),
				"actions": []any{obj{"type": "http_response", "status": 200, "headers": headers(MaxHeaders - 1)}}, "max_uses": 1}) // 14 x 64
		}
		addTransition(m, obj{"id": "last", "from": "start", "to": "start", "trigger": httpTrig("GET", "/last"),
			"actions": []any{obj{"type": "http_response", "status": 200, "headers": headers(lastHeaders)}}, "max_uses": 1})
		if sends > 0 {
			var acts []any
			for range sends {
				acts = append(acts, obj{"type": "websocket_send", "data": "d"})
			}
			addTransition(m, obj{"id": "ws", "from": "start", "to": "start", "trigger": obj{"protocol": "websocket_message", "path": "/ws"}, "actions": acts, "max_uses": 1})
		}
		return m
	}
	// 15 x 64 = 960; the last response has 1+h fields.
	if is := parseRunIssues(t, build(63, 0), []any{}); len(is) > 0 {
		t.Fatalf("1024 fields:%s", issuesString(is))
	}
	if is := parseRunIssues(t, build(64, 0), []any{}); !hasIssue(is, CodeActionFieldsExceeded, "$.machine.transitions[15].actions") {
		t.Fatalf("1025 fields:%s", issuesString(is))
	}
	if is := parseRunIssues(t, build(62, 1), []any{}); len(is) > 0 {
		t.Fatalf("1023 fields + 1 send:%s", issuesString(is))
	}
	if is := parseRunIssues(t, build(62, 2), []any{}); !hasIssue(is, CodeActionFieldsExceeded, "$.machine.transitions[16].actions") {
		t.Fatalf("1023 fields + 2 sends:%s", issuesString(is))
	}
}

func TestRunActionBytesBound(t *testing.T) {
	empty, _ := Action{Type: ActionHTTPResponse, Status: 200}.MarshalJSON()
	build := func(total int) obj {
		m := obj{
			"initial_state": "start",
			"states":        []any{obj{"name": "start"}, obj{"name": "done", "terminal": true}},
			"transitions": []any{obj{"id": "t", "from": "start", "to": "done", "trigger": httpTrig("GET", "/"),
				"actions": []any{resp(200, strings.Repeat("a", total-len(empty)))}, "max_uses": 1}},
			"max_transitions": 1,
		}
		return m
	}
	if is := parseRunIssues(t, build(MaxActionJSONBytes), []any{}); len(is) > 0 {
		t.Fatalf("4 MiB:%s", issuesString(is))
	}
	if is := parseRunIssues(t, build(MaxActionJSONBytes+1), []any{}); !hasIssue(is, CodeActionBytesExceeded, "$.machine.transitions[0].actions") {
		t.Fatalf("4 MiB + 1:%s", issuesString(is))
	}
}

func TestRunDocumentRules(t *testing.T) {
	good := minimalMachine()
	for _, tc := range []struct {
		name   string
		doc    obj
		code   string
		path   string
		absent string // text no issue may contain
	}{
		{"missing machine", obj{"events": []any{}}, CodeMissingField, "$.machine", ""},
		{"missing events", obj{"machine": good}, CodeMissingField, "$.events", ""},
		{"unknown member", obj{"machine": good, "events": []any{}, "trace": 1}, CodeUnknownField, "$.trace", ""},
		{"machine issue path", obj{"machine": obj{"initial_state": 1}, "events": []any{}}, CodeWrongType, "$.machine.initial_state", ""},
		{"events not array", obj{"machine": good, "events": obj{}}, CodeWrongType, "$.events", ""},
		{"event type unknown", obj{"machine": good, "events": []any{obj{"type": "smtp"}}}, CodeInvalidVariant, "$.events[0].type", ""},
		{"event type missing", obj{"machine": good, "events": []any{obj{"method": "GET"}}}, CodeMissingField, "$.events[0].type", ""},
		{"http method missing", obj{"machine": good, "events": []any{obj{"type": "http_request", "path": "/"}}}, CodeMissingField, "$.events[0].method", ""},
		{"http path invalid is not echoed", obj{"machine": good, "events": []any{obj{"type": "http_request", "method": "GET", "path": "?token=SeCrEt-Value"}}}, CodeInvalidName, "$.events[0].path", "SeCrEt"},
		{"connection invalid is not echoed", obj{"machine": good, "events": []any{obj{"type": "http_request", "method": "GET", "path": "/", "connection": "SeCrEt value"}}}, CodeInvalidName, "$.events[0].connection", "SeCrEt"},
		{"header value CR is not echoed", obj{"machine": good, "events": []any{obj{"type": "http_request", "method": "GET", "path": "/", "headers": obj{"authorization": "SeCrEt\r\n"}}}}, CodeInvalidValue, "$.events[0].headers.authorization", "SeCrEt"},
		{"header duplicate by case", obj{"machine": good, "events": []any{obj{"type": "http_request", "method": "GET", "path": "/", "headers": obj{"A": "1", "a": "2"}}}}, CodeDuplicateEntry, "$.events[0].headers.a", ""},
		{"http body number", obj{"machine": good, "events": []any{obj{"type": "http_request", "method": "GET", "path": "/", "body": 3}}}, CodeWrongType, "$.events[0].body", ""},
		{"ws connect without connection", obj{"machine": good, "events": []any{obj{"type": "websocket_connect", "path": "/ws"}}}, CodeMissingField, "$.events[0].connection", ""},
		{"ws message without body", obj{"machine": good, "events": []any{obj{"type": "websocket_message", "connection": "c"}}}, CodeMissingField, "$.events[0].body", ""},
		{"ws message null body", obj{"machine": good, "events": []any{obj{"type": "websocket_message", "connection": "c", "body": nil}}}, CodeWrongType, "$.events[0].body", ""},
		{"ws message path", obj{"machine": good, "events": []any{obj{"type": "websocket_message", "connection": "c", "body": "", "path": "/"}}}, CodeUnknownField, "$.events[0].path", ""},
		{"ws connect body", obj{"machine": good, "events": []any{obj{"type": "websocket_connect", "connection": "c", "path": "/", "body": ""}}}, CodeUnknownField, "$.events[0].body", ""},
		{"at_ms negative", obj{"machine": good, "events": []any{obj{"type": "http_request", "method": "GET", "path": "/", "at_ms": -1}}}, CodeOutOfRange, "$.events[0].at_ms", ""},
		{"at_ms decreasing", obj{"machine": good, "events": []any{
			obj{"type": "http_request", "method": "GET", "path": "/", "at_ms": 5},
			obj{"type": "http_request", "method": "GET", "path": "/"}, // defaults to 5
			obj{"type": "http_request", "method": "GET", "path": "/", "at_ms": 4},
		}}, CodeNotSorted, "$.events[2].at_ms", ""},
		{"connection used for http and websocket", obj{"machine": good, "events": []any{
			obj{"type": "http_request", "method": "GET", "path": "/", "connection": "c"},
			obj{"type": "websocket_connect", "path": "/ws", "connection": "c"},
		}}, CodeConnectionConflict, "$.events[1].connection", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, is := ParseRun(mustJSON(t, tc.doc))
			if run != nil || !hasIssue(is, tc.code, tc.path) {
				t.Fatalf("want %s at %s:%s", tc.code, tc.path, issuesString(is))
			}
			if tc.absent != "" && strings.Contains(issuesString(is), tc.absent) {
				t.Fatalf("issues echo the value:%s", issuesString(is))
			}
		})
	}
	for _, tc := range []struct{ name, doc, code string }{
		{"not JSON", `{"machine":`, CodeInvalidJSON},
		{"duplicate member", `{"machine":{},"machine":{},"events":[]}`, CodeDuplicateKey},
		{"not an object", `[]`, CodeWrongType},
	} {
		if run, is := ParseRun([]byte(tc.doc)); run != nil || len(is) == 0 || is[0].Code != tc.code {
			t.Fatalf("%s:%s", tc.name, issuesString(is))
		}
	}
	if _, is := ParseRun(make([]byte, MaxInputBytes+1)); !hasIssue(is, CodeTooLarge, "$") {
		t.Fatalf("oversized:%s", issuesString(is))
	}
}

func TestRunEventDefaults(t *testing.T) {
	run, is := ParseRun(mustJSON(t, obj{"machine": minimalMachine(), "events": []any{
		obj{"type": "http_request", "method": "GET", "path": "/l", "at_ms": 7, "headers": obj{"X-A": "1"}},
		obj{"type": "http_request", "method": "GET", "path": "/l", "body": nil},
		obj{"type": "websocket_message", "connection": "w", "body": ""},
	}}))
	if len(is) > 0 {
		t.Fatal(issuesString(is))
	}
	e := run.Events
	if e[0].AtMS != 7 || e[1].AtMS != 7 || e[0].Headers["x-a"] != "1" || e[1].Body != nil || e[2].Body == nil || *e[2].Body != "" {
		t.Fatalf("events %+v", e)
	}
}
