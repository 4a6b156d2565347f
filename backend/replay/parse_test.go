package replay

import (
	"strconv"
	"strings"
	"testing"
)

type ruleCase struct {
	name   string
	mutate func(m obj)
	code   string // "" when the machine must be accepted
	path   string
}

func runRules(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := baseMachine()
			tc.mutate(m)
			got, is := ParseMachine(mustJSON(t, m))
			if tc.code == "" {
				if len(is) > 0 || got == nil {
					t.Fatalf("rejected:%s", issuesString(is))
				}
				return
			}
			if got != nil {
				t.Fatalf("accepted; want %s at %s", tc.code, tc.path)
			}
			if !hasIssue(is, tc.code, tc.path) {
				t.Fatalf("want %s at %s; got:%s", tc.code, tc.path, issuesString(is))
			}
		})
	}
}

func TestMachineGraphRules(t *testing.T) {
	runRules(t, []ruleCase{
		{"base", func(obj) {}, "", ""},
		{"no terminal state", func(m obj) { st(m, 2)["terminal"] = false }, CodeNoTerminalState, "$.states"},
		{"terminal with outgoing", func(m obj) {
			addTransition(m, obj{"id": "t3", "from": "done", "to": "start", "trigger": httpTrig("GET", "/c"), "actions": []any{resp(200, "")}, "max_uses": 1})
		}, CodeTerminalHasTransitions, "$.transitions[2].from"},
		{"unknown initial", func(m obj) { m["initial_state"] = "nope" }, CodeUnknownState, "$.initial_state"},
		{"unknown from", func(m obj) { tr(m, 1)["from"] = "nope" }, CodeUnknownState, "$.transitions[1].from"},
		{"unknown to", func(m obj) { tr(m, 1)["to"] = "nope" }, CodeUnknownState, "$.transitions[1].to"},
		{"unreachable", func(m obj) { addState(m, obj{"name": "island"}) }, CodeUnreachableState, "$.states[3]"},
		{"unreachable behind terminal", func(m obj) {
			addState(m, obj{"name": "after"})
			addTransition(m, obj{"id": "t3", "from": "after", "to": "done", "trigger": httpTrig("GET", "/c"), "actions": []any{resp(200, "")}, "max_uses": 1})
		}, CodeUnreachableState, "$.states[3]"},
		{"duplicate state", func(m obj) { addState(m, obj{"name": "mid"}) }, CodeDuplicateEntry, "$.states[3].name"},
		{"duplicate id", func(m obj) { tr(m, 1)["id"] = "t1" }, CodeDuplicateEntry, "$.transitions[1].id"},
		{"ambiguous", func(m obj) {
			addTransition(m, obj{"id": "t3", "from": "start", "to": "done", "trigger": httpTrig("GET", "/a"), "actions": []any{resp(201, "")}, "max_uses": 1})
		}, CodeAmbiguousTransition, "$.transitions[2]"},
		{"ambiguous header case and order", func(m obj) {
			tr(m, 0)["trigger"] = obj{"protocol": "http", "method": "GET", "path": "/a", "headers": obj{"X-A": "1", "x-b": "2"}}
			addTransition(m, obj{"id": "t3", "from": "start", "to": "done", "trigger": obj{"protocol": "http", "method": "GET", "path": "/a", "headers": obj{"x-b": "2", "x-a": "1"}}, "actions": []any{resp(201, "")}, "max_uses": 1})
		}, CodeAmbiguousTransition, "$.transitions[2]"},
		{"ambiguous explicit default priority", func(m obj) {
			addTransition(m, obj{"id": "t3", "from": "start", "to": "done", "priority": 100, "trigger": httpTrig("GET", "/a"), "actions": []any{resp(201, "")}, "max_uses": 1})
		}, CodeAmbiguousTransition, "$.transitions[2]"},
		{"same trigger other priority", func(m obj) {
			addTransition(m, obj{"id": "t3", "from": "start", "to": "done", "priority": 99, "trigger": httpTrig("GET", "/a"), "actions": []any{resp(201, "")}, "max_uses": 1})
		}, "", ""},
		{"same trigger other body", func(m obj) {
			addTransition(m, obj{"id": "t3", "from": "start", "to": "done", "trigger": obj{"protocol": "http", "method": "GET", "path": "/a", "body": "x"}, "actions": []any{resp(201, "")}, "max_uses": 1})
		}, "", ""},
		{"same trigger other state", func(m obj) {
			addTransition(m, obj{"id": "t3", "from": "mid", "to": "done", "trigger": httpTrig("GET", "/a"), "actions": []any{resp(201, "")}, "max_uses": 1})
		}, "", ""},
		{"cycle", func(m obj) {
			addTransition(m, obj{"id": "back", "from": "mid", "to": "start", "trigger": httpTrig("GET", "/back"), "actions": []any{resp(200, "")}, "max_uses": 3})
		}, "", ""},
		{"initial terminal alone", func(m obj) {
			m["states"] = []any{obj{"name": "only", "terminal": true}}
			m["initial_state"] = "only"
			m["transitions"] = []any{}
		}, "", ""},
	})
}

func TestMachineCredentialRules(t *testing.T) {
	var cases []ruleCase
	for _, h := range []string{"authorization", "Cookie", "PROXY-AUTHORIZATION", "set-cookie"} {
		cases = append(cases,
			ruleCase{"http trigger " + h, func(m obj) {
				tr(m, 0)["trigger"] = obj{"protocol": "http", "method": "GET", "path": "/a", "headers": obj{h: "x"}}
			}, CodeCredentialHeader, "$.transitions[0].trigger.headers" + keyPath(h)},
			ruleCase{"ws connect trigger " + h, func(m obj) {
				tr(m, 0)["trigger"] = obj{"protocol": "websocket_connect", "path": "/ws", "headers": obj{h: "x"}}
				tr(m, 0)["actions"] = []any{}
			}, CodeCredentialHeader, "$.transitions[0].trigger.headers" + keyPath(h)},
			ruleCase{"plain capture " + h, func(m obj) {
				tr(m, 0)["captures"] = []any{obj{"variable": "c", "value": hdr(h)}}
			}, CodeCredentialNotSensitive, "$.transitions[0].captures[0].sensitive"},
			ruleCase{"sensitive capture " + h, func(m obj) {
				tr(m, 0)["captures"] = []any{obj{"variable": "c", "value": hdr(h), "sensitive": true}}
			}, "", ""},
		)
	}
	cases = append(cases,
		ruleCase{"guard compares credential with plain variable", func(m obj) {
			tr(m, 0)["captures"] = []any{obj{"variable": "tok", "value": jsonSrc("request_json", "token")}}
			tr(m, 1)["guards"] = []any{obj{"variable": "tok", "value": hdr("Authorization")}}
		}, CodeCredentialNotSensitive, "$.transitions[1].guards[0].variable"},
		ruleCase{"guard compares credential with sensitive variable", func(m obj) {
			tr(m, 0)["captures"] = []any{obj{"variable": "tok", "value": hdr("authorization"), "sensitive": true}}
			tr(m, 1)["guards"] = []any{obj{"variable": "tok", "value": hdr("Authorization")}}
		}, "", ""},
		ruleCase{"other header matcher", func(m obj) {
			tr(m, 0)["trigger"] = obj{"protocol": "http", "method": "GET", "path": "/a", "headers": obj{"x-api-version": "2"}}
		}, "", ""},
	)
	runRules(t, cases)
}

func TestMachineGuardFixpoint(t *testing.T) {
	capX := []any{obj{"variable": "x", "value": jsonSrc("request_json", "x")}}
	guardX := []any{obj{"variable": "x", "value": jsonSrc("request_json", "x")}}
	// diamond: start -> (a | b) -> mid -> done; the guard is on mid -> done.
	diamond := func(captureOnB bool) func(m obj) {
		return func(m obj) {
			addState(m, obj{"name": "a"})
			addState(m, obj{"name": "b"})
			m["transitions"] = []any{
				obj{"id": "sa", "from": "start", "to": "a", "trigger": httpTrig("GET", "/a"), "captures": capX, "actions": []any{resp(200, "")}, "max_uses": 1},
				obj{"id": "sb", "from": "start", "to": "b", "trigger": httpTrig("GET", "/b"), "actions": []any{resp(200, "")}, "max_uses": 1},
				obj{"id": "am", "from": "a", "to": "mid", "trigger": httpTrig("GET", "/m"), "actions": []any{resp(200, "")}, "max_uses": 1},
				obj{"id": "bm", "from": "b", "to": "mid", "trigger": httpTrig("GET", "/m"), "actions": []any{resp(200, "")}, "max_uses": 1},
				obj{"id": "md", "from": "mid", "to": "done", "trigger": httpTrig("POST", "/d"), "guards": guardX, "actions": []any{resp(200, "")}, "max_uses": 1},
			}
			if captureOnB {
				tr(m, 1)["captures"] = capX
			}
		}
	}
	runRules(t, []ruleCase{
		{"captured before use", func(m obj) {
			tr(m, 0)["captures"] = capX
			tr(m, 1)["guards"] = guardX
		}, "", ""},
		{"never captured", func(m obj) { tr(m, 1)["guards"] = guardX }, CodeUncapturedVariable, "$.transitions[1].guards[0].variable"},
		{"captured after use", func(m obj) {
			tr(m, 0)["guards"] = guardX
			tr(m, 1)["captures"] = capX
		}, CodeUncapturedVariable, "$.transitions[0].guards[0].variable"},
		{"captured by the guarded transition itself", func(m obj) {
			tr(m, 0)["captures"] = capX
			tr(m, 0)["guards"] = guardX
		}, CodeUncapturedVariable, "$.transitions[0].guards[0].variable"},
		{"diamond one branch", diamond(false), CodeUncapturedVariable, "$.transitions[4].guards[0].variable"},
		{"diamond both branches", diamond(true), "", ""},
		{"loop back to start loses nothing it had", func(m obj) {
			// start -a(capture x)-> mid -back-> start; mid -b(guard x)-> done
			tr(m, 0)["captures"] = capX
			tr(m, 1)["guards"] = guardX
			addTransition(m, obj{"id": "back", "from": "mid", "to": "start", "trigger": httpTrig("GET", "/back"), "actions": []any{resp(200, "")}, "max_uses": 2})
		}, "", ""},
		{"loop into mid without capture", func(m obj) {
			// a second way into mid that never captures x
			tr(m, 0)["captures"] = capX
			tr(m, 1)["guards"] = guardX
			addState(m, obj{"name": "side"})
			addTransition(m, obj{"id": "s1", "from": "start", "to": "side", "trigger": httpTrig("GET", "/side"), "actions": []any{resp(200, "")}, "max_uses": 1})
			addTransition(m, obj{"id": "s2", "from": "side", "to": "mid", "trigger": httpTrig("GET", "/m"), "actions": []any{resp(200, "")}, "max_uses": 1})
		}, CodeUncapturedVariable, "$.transitions[1].guards[0].variable"},
		{"prototype names are not inherited", func(m obj) {
			tr(m, 1)["guards"] = []any{obj{"variable": "__proto__", "value": jsonSrc("request_json", "x")}}
		}, CodeUncapturedVariable, "$.transitions[1].guards[0].variable"},
		{"prototype names are plain variables", func(m obj) {
			tr(m, 0)["captures"] = []any{obj{"variable": "__proto__", "value": jsonSrc("request_json", "x")}, obj{"variable": "constructor", "value": jsonSrc("request_json", "y")}}
			tr(m, 1)["guards"] = []any{obj{"variable": "__proto__", "value": jsonSrc("request_json", "x")}, obj{"variable": "constructor", "value": jsonSrc("request_json", "y")}}
		}, "", ""},
		{"inconsistent sensitivity", func(m obj) {
			tr(m, 0)["captures"] = []any{obj{"variable": "x", "value": jsonSrc("request_json", "x"), "sensitive": true}}
			tr(m, 1)["captures"] = []any{obj{"variable": "x", "value": jsonSrc("request_json", "x")}}
		}, CodeInconsistentSensitivity, "$.transitions[1].captures[0].sensitive"},
		{"duplicate capture variable", func(m obj) {
			tr(m, 0)["captures"] = []any{obj{"variable": "x", "value": jsonSrc("request_json", "x")}, obj{"variable": "x", "value": jsonSrc("request_json", "y")}}
		}, CodeDuplicateEntry, "$.transitions[0].captures[1].variable"},
	})
}

func TestMachineActionAndSourceRules(t *testing.T) {
	wsMsg := func(m obj, i int) obj {
		t := tr(m, i)
		t["trigger"] = obj{"protocol": "websocket_message", "path": "/ws"}
		t["actions"] = []any{obj{"type": "websocket_send", "data": `{"token":"abc","n":1,"e":"","list":[{"k":"v"}],"__proto__":"own"}`}}
		return t
	}
	runRules(t, []ruleCase{
		{"http without response", func(m obj) { tr(m, 0)["actions"] = []any{} }, CodeHTTPResponseCount, "$.transitions[0].actions"},
		{"http without actions member", func(m obj) { delete(tr(m, 0), "actions") }, CodeHTTPResponseCount, "$.transitions[0].actions"},
		{"http two responses", func(m obj) { tr(m, 0)["actions"] = []any{resp(200, ""), resp(500, "")} }, CodeHTTPResponseCount, "$.transitions[0].actions"},
		{"http response with delay", func(m obj) {
			tr(m, 0)["actions"] = []any{obj{"type": "delay", "duration_ms": 5}, resp(200, "")}
		}, "", ""},
		{"http websocket_send", func(m obj) {
			tr(m, 0)["actions"] = []any{resp(200, ""), obj{"type": "websocket_send", "data": "x"}}
		}, CodeActionNotAllowed, "$.transitions[0].actions[1].type"},
		{"http disconnect", func(m obj) {
			tr(m, 0)["actions"] = []any{resp(200, ""), obj{"type": "disconnect"}}
		}, CodeActionNotAllowed, "$.transitions[0].actions[1].type"},
		{"ws message http_response", func(m obj) {
			wsMsg(m, 0)["actions"] = []any{resp(200, "")}
		}, CodeActionNotAllowed, "$.transitions[0].actions[0].type"},
		{"ws connect http_response", func(m obj) {
			tr(m, 0)["trigger"] = obj{"protocol": "websocket_connect", "path": "/ws"}
		}, CodeActionNotAllowed, "$.transitions[0].actions[0].type"},
		{"ws message send and disconnect", func(m obj) {
			wsMsg(m, 0)["actions"] = []any{obj{"type": "websocket_send", "data": "bye"}, obj{"type": "disconnect"}}
		}, "", ""},
		{"ws message no actions", func(m obj) { wsMsg(m, 0)["actions"] = []any{} }, "", ""},
		{"request_json on websocket", func(m obj) {
			wsMsg(m, 0)["captures"] = []any{obj{"variable": "x", "value": jsonSrc("request_json", "x")}}
		}, CodeSourceNotAllowed, "$.transitions[0].captures[0].value.source"},
		{"request_header on websocket message", func(m obj) {
			wsMsg(m, 0)["captures"] = []any{obj{"variable": "x", "value": hdr("x-id")}}
		}, CodeSourceNotAllowed, "$.transitions[0].captures[0].value.source"},
		{"request_header on websocket connect", func(m obj) {
			tr(m, 0)["trigger"] = obj{"protocol": "websocket_connect", "path": "/ws"}
			tr(m, 0)["actions"] = []any{}
			tr(m, 0)["captures"] = []any{obj{"variable": "x", "value": hdr("x-id")}}
		}, "", ""},
		{"websocket_json on http", func(m obj) {
			tr(m, 0)["captures"] = []any{obj{"variable": "x", "value": jsonSrc("websocket_json", "x")}}
		}, CodeSourceNotAllowed, "$.transitions[0].captures[0].value.source"},
		{"websocket_json guard on http", func(m obj) {
			tr(m, 0)["captures"] = []any{obj{"variable": "x", "value": jsonSrc("request_json", "x")}}
			tr(m, 1)["guards"] = []any{obj{"variable": "x", "value": jsonSrc("websocket_json", "x")}}
		}, CodeSourceNotAllowed, "$.transitions[1].guards[0].value.source"},
		{"action_json without payload", func(m obj) {
			wsMsg(m, 0)["actions"] = []any{obj{"type": "disconnect"}}
			tr(m, 0)["captures"] = []any{obj{"variable": "x", "value": jsonSrc("action_json", "token")}}
		}, CodeSourceNotAllowed, "$.transitions[0].captures[0].value.source"},
		{"action_json payload not JSON", func(m obj) {
			tr(m, 0)["captures"] = []any{obj{"variable": "x", "value": jsonSrc("action_json", "token")}}
		}, CodeUnresolvedActionPath, "$.transitions[0].captures[0].value.source"},
		{"action_json resolves", func(m obj) {
			wsMsg(m, 0)["captures"] = []any{obj{"variable": "x", "value": jsonSrc("action_json", "list", 0, "k"), "sensitive": true}}
		}, "", ""},
		{"action_json own __proto__ member", func(m obj) {
			wsMsg(m, 0)["captures"] = []any{obj{"variable": "x", "value": jsonSrc("action_json", "__proto__")}}
		}, "", ""},
		{"action_json missing member", func(m obj) {
			wsMsg(m, 0)["captures"] = []any{obj{"variable": "x", "value": jsonSrc("action_json", "missing")}}
		}, CodeUnresolvedActionPath, "$.transitions[0].captures[0].value.path"},
		{"action_json constructor is not inherited", func(m obj) {
			wsMsg(m, 0)["captures"] = []any{obj{"variable": "x", "value": jsonSrc("action_json", "constructor")}}
		}, CodeUnresolvedActionPath, "$.transitions[0].captures[0].value.path"},
		{"action_json toString is not inherited", func(m obj) {
			wsMsg(m, 0)["captures"] = []any{obj{"variable": "x", "value": jsonSrc("action_json", "token", "toString")}}
		}, CodeUnresolvedActionPath, "$.transitions[0].captures[0].value.path"},
		{"action_json index into object", func(m obj) {
			wsMsg(m, 0)["captures"] = []any{obj{"variable": "x", "value": jsonSrc("action_json", 0)}}
		}, CodeUnresolvedActionPath, "$.transitions[0].captures[0].value.path"},
		{"action_json key into array", func(m obj) {
			wsMsg(m, 0)["captures"] = []any{obj{"variable": "x", "value": jsonSrc("action_json", "list", "0")}}
		}, CodeUnresolvedActionPath, "$.transitions[0].captures[0].value.path"},
		{"action_json http body", func(m obj) {
			tr(m, 0)["actions"] = []any{resp(200, `{"id":7}`)}
			tr(m, 0)["captures"] = []any{obj{"variable": "x", "value": jsonSrc("action_json", "id")}}
		}, "", ""},
		{"sensitive action_json number", func(m obj) {
			wsMsg(m, 0)["captures"] = []any{obj{"variable": "x", "value": jsonSrc("action_json", "n"), "sensitive": true}}
		}, CodeSensitiveNotString, "$.transitions[0].captures[0].value.path"},
		{"sensitive action_json empty", func(m obj) {
			wsMsg(m, 0)["captures"] = []any{obj{"variable": "x", "value": jsonSrc("action_json", "e"), "sensitive": true}}
		}, CodeSensitiveNotString, "$.transitions[0].captures[0].value.path"},
	})
}

func TestMachineSchemaRules(t *testing.T) {
	runRules(t, []ruleCase{
		{"missing initial_state", func(m obj) { delete(m, "initial_state") }, CodeMissingField, "$.initial_state"},
		{"missing states", func(m obj) { delete(m, "states") }, CodeMissingField, "$.states"},
		{"empty states", func(m obj) { m["states"] = []any{} }, CodeTooFewEntries, "$.states"},
		{"missing transitions", func(m obj) { delete(m, "transitions") }, CodeMissingField, "$.transitions"},
		{"missing max_transitions", func(m obj) { delete(m, "max_transitions") }, CodeMissingField, "$.max_transitions"},
		{"max_transitions 0", func(m obj) { m["max_transitions"] = 0 }, CodeOutOfRange, "$.max_transitions"},
		{"max_transitions max", func(m obj) { m["max_transitions"] = MaxCount }, "", ""},
		{"max_transitions fraction", func(m obj) { m["max_transitions"] = 1.5 }, CodeNotInteger, "$.max_transitions"},
		{"max_transitions string", func(m obj) { m["max_transitions"] = "10" }, CodeWrongType, "$.max_transitions"},
		{"unknown top field", func(m obj) { m["version"] = 1 }, CodeUnknownField, "$.version"},
		{"constructor is an unknown field", func(m obj) { m["constructor"] = 1 }, CodeUnknownField, "$.constructor"},
		{"__proto__ is an unknown field", func(m obj) { m["__proto__"] = obj{} }, CodeUnknownField, "$.__proto__"},
		{"toString in a state", func(m obj) { st(m, 0)["toString"] = "x" }, CodeUnknownField, "$.states[0].toString"},
		{"states not array", func(m obj) { m["states"] = obj{} }, CodeWrongType, "$.states"},
		{"state name missing", func(m obj) { delete(st(m, 0), "name") }, CodeMissingField, "$.states[0].name"},
		{"state name invalid", func(m obj) { st(m, 1)["name"] = "a b" }, CodeInvalidName, "$.states[1].name"},
		{"state name too long", func(m obj) { st(m, 1)["name"] = strings.Repeat("a", 65) }, CodeInvalidName, "$.states[1].name"},
		{"state name 64", func(m obj) {
			n := strings.Repeat("a", 64)
			st(m, 1)["name"] = n
			tr(m, 0)["to"] = n
			tr(m, 1)["from"] = n
		}, "", ""},
		{"state named constructor", func(m obj) {
			st(m, 1)["name"] = "constructor"
			tr(m, 0)["to"] = "constructor"
			tr(m, 1)["from"] = "constructor"
		}, "", ""},
		{"terminal string", func(m obj) { st(m, 2)["terminal"] = "yes" }, CodeWrongType, "$.states[2].terminal"},
		{"max_visits 0", func(m obj) { st(m, 0)["max_visits"] = 0 }, CodeOutOfRange, "$.states[0].max_visits"},
		{"max_visits max+1", func(m obj) { st(m, 0)["max_visits"] = MaxCount + 1 }, CodeOutOfRange, "$.states[0].max_visits"},
		{"max_uses missing", func(m obj) { delete(tr(m, 0), "max_uses") }, CodeMissingField, "$.transitions[0].max_uses"},
		{"max_uses 0", func(m obj) { tr(m, 0)["max_uses"] = 0 }, CodeOutOfRange, "$.transitions[0].max_uses"},
		{"priority -1", func(m obj) { tr(m, 0)["priority"] = -1 }, CodeOutOfRange, "$.transitions[0].priority"},
		{"priority 0", func(m obj) { tr(m, 0)["priority"] = 0 }, "", ""},
		{"id invalid", func(m obj) { tr(m, 0)["id"] = "-x" }, CodeInvalidName, "$.transitions[0].id"},
		{"trigger missing", func(m obj) { delete(tr(m, 0), "trigger") }, CodeMissingField, "$.transitions[0].trigger"},
		{"trigger protocol unknown", func(m obj) { tr(m, 0)["trigger"] = obj{"protocol": "ftp", "path": "/"} }, CodeInvalidVariant, "$.transitions[0].trigger.protocol"},
		{"trigger protocol missing", func(m obj) { tr(m, 0)["trigger"] = obj{"path": "/"} }, CodeMissingField, "$.transitions[0].trigger.protocol"},
		{"trigger protocol __proto__", func(m obj) { tr(m, 0)["trigger"] = obj{"protocol": "__proto__", "path": "/"} }, CodeInvalidVariant, "$.transitions[0].trigger.protocol"},
		{"http method missing", func(m obj) { delete(tr(m, 0)["trigger"].(obj), "method") }, CodeMissingField, "$.transitions[0].trigger.method"},
		{"http method lower case", func(m obj) { tr(m, 0)["trigger"].(obj)["method"] = "get" }, CodeInvalidName, "$.transitions[0].trigger.method"},
		{"path relative", func(m obj) { tr(m, 0)["trigger"].(obj)["path"] = "a" }, CodeInvalidName, "$.transitions[0].trigger.path"},
		{"path with space", func(m obj) { tr(m, 0)["trigger"].(obj)["path"] = "/a b" }, CodeInvalidName, "$.transitions[0].trigger.path"},
		{"path with query", func(m obj) { tr(m, 0)["trigger"].(obj)["path"] = "/a?x=1" }, "", ""},
		{"body number", func(m obj) { tr(m, 0)["trigger"].(obj)["body"] = 1 }, CodeWrongType, "$.transitions[0].trigger.body"},
		{"body null", func(m obj) { tr(m, 0)["trigger"].(obj)["body"] = nil }, "", ""},
		{"ws message headers", func(m obj) {
			tr(m, 0)["trigger"] = obj{"protocol": "websocket_message", "path": "/ws", "headers": obj{}}
			tr(m, 0)["actions"] = []any{}
		}, CodeUnknownField, "$.transitions[0].trigger.headers"},
		{"ws connect body", func(m obj) {
			tr(m, 0)["trigger"] = obj{"protocol": "websocket_connect", "path": "/ws", "body": nil}
			tr(m, 0)["actions"] = []any{}
		}, CodeUnknownField, "$.transitions[0].trigger.body"},
		{"ws method", func(m obj) {
			tr(m, 0)["trigger"] = obj{"protocol": "websocket_connect", "path": "/ws", "method": "GET"}
			tr(m, 0)["actions"] = []any{}
		}, CodeUnknownField, "$.transitions[0].trigger.method"},
		{"header case duplicate", func(m obj) { tr(m, 0)["trigger"].(obj)["headers"] = obj{"X-A": "1", "x-a": "1"} }, CodeDuplicateEntry, `$.transitions[0].trigger.headers["x-a"]`},
		{"header name invalid", func(m obj) { tr(m, 0)["trigger"].(obj)["headers"] = obj{"a b": "1"} }, CodeInvalidName, `$.transitions[0].trigger.headers["a b"]`},
		{"header value CRLF", func(m obj) { tr(m, 0)["trigger"].(obj)["headers"] = obj{"x-a": "1\r\nx: 2"} }, CodeInvalidValue, `$.transitions[0].trigger.headers["x-a"]`},
		{"header value 8192", func(m obj) {
			tr(m, 0)["trigger"].(obj)["headers"] = obj{"x-a": strings.Repeat("v", MaxHeaderValueChars)}
		}, "", ""},
		{"header value 8193", func(m obj) {
			tr(m, 0)["trigger"].(obj)["headers"] = obj{"x-a": strings.Repeat("v", MaxHeaderValueChars+1)}
		}, CodeInvalidLength, `$.transitions[0].trigger.headers["x-a"]`},
		{"path step 1025 characters", func(m obj) {
			tr(m, 0)["captures"] = []any{obj{"variable": "x", "value": jsonSrc("request_json", strings.Repeat("k", 1025))}}
		}, CodeInvalidLength, "$.transitions[0].captures[0].value.path[0]"},
		{"header value number", func(m obj) { tr(m, 0)["trigger"].(obj)["headers"] = obj{"x-a": 1} }, CodeWrongType, `$.transitions[0].trigger.headers["x-a"]`},
		{"action type unknown", func(m obj) { tr(m, 0)["actions"] = []any{obj{"type": "email"}} }, CodeInvalidVariant, "$.transitions[0].actions[0].type"},
		{"action status 99", func(m obj) { tr(m, 0)["actions"] = []any{resp(99, "")} }, CodeOutOfRange, "$.transitions[0].actions[0].status"},
		{"action status 600", func(m obj) { tr(m, 0)["actions"] = []any{resp(600, "")} }, CodeOutOfRange, "$.transitions[0].actions[0].status"},
		{"action status missing", func(m obj) { tr(m, 0)["actions"] = []any{obj{"type": "http_response"}} }, CodeMissingField, "$.transitions[0].actions[0].status"},
		{"action data on response", func(m obj) {
			tr(m, 0)["actions"] = []any{obj{"type": "http_response", "status": 200, "data": "x"}}
		}, CodeUnknownField, "$.transitions[0].actions[0].data"},
		{"delay too long", func(m obj) {
			tr(m, 0)["actions"] = []any{resp(200, ""), obj{"type": "delay", "duration_ms": MaxLimitDurationMS + 1}}
		}, CodeOutOfRange, "$.transitions[0].actions[1].duration_ms"},
		{"too many actions", func(m obj) {
			acts := []any{resp(200, "")}
			for range MaxActions {
				acts = append(acts, obj{"type": "delay", "duration_ms": 1})
			}
			tr(m, 0)["actions"] = acts
		}, CodeTooManyEntries, "$.transitions[0].actions"},
		{"source unknown", func(m obj) {
			tr(m, 0)["captures"] = []any{obj{"variable": "x", "value": obj{"source": "env", "name": "HOME"}}}
		}, CodeInvalidVariant, "$.transitions[0].captures[0].value.source"},
		{"source header with path", func(m obj) {
			tr(m, 0)["captures"] = []any{obj{"variable": "x", "value": obj{"source": "request_header", "name": "x-a", "path": []any{}}}}
		}, CodeUnknownField, "$.transitions[0].captures[0].value.path"},
		{"source path missing", func(m obj) {
			tr(m, 0)["captures"] = []any{obj{"variable": "x", "value": obj{"source": "request_json"}}}
		}, CodeMissingField, "$.transitions[0].captures[0].value.path"},
		{"path step bool", func(m obj) {
			tr(m, 0)["captures"] = []any{obj{"variable": "x", "value": jsonSrc("request_json", true)}}
		}, CodeWrongType, "$.transitions[0].captures[0].value.path[0]"},
		{"path step fraction", func(m obj) {
			tr(m, 0)["captures"] = []any{obj{"variable": "x", "value": jsonSrc("request_json", "a", 1.5)}}
		}, CodeNotInteger, "$.transitions[0].captures[0].value.path[1]"},
		{"path step negative", func(m obj) {
			tr(m, 0)["captures"] = []any{obj{"variable": "x", "value": jsonSrc("request_json", -1)}}
		}, CodeOutOfRange, "$.transitions[0].captures[0].value.path[0]"},
		{"path too long", func(m obj) {
			p := make([]any, MaxPathSteps+1)
			for i := range p {
				p[i] = "k"
			}
			tr(m, 0)["captures"] = []any{obj{"variable": "x", "value": jsonSrc("request_json", p...)}}
		}, CodeTooManyEntries, "$.transitions[0].captures[0].value.path"},
		{"variable invalid", func(m obj) {
			tr(m, 0)["captures"] = []any{obj{"variable": "1x", "value": jsonSrc("request_json")}}
		}, CodeInvalidName, "$.transitions[0].captures[0].variable"},
		{"sensitive string", func(m obj) {
			tr(m, 0)["captures"] = []any{obj{"variable": "x", "value": jsonSrc("request_json"), "sensitive": "yes"}}
		}, CodeWrongType, "$.transitions[0].captures[0].sensitive"},
		{"guard value missing", func(m obj) {
			tr(m, 0)["captures"] = []any{obj{"variable": "x", "value": jsonSrc("request_json")}}
			tr(m, 1)["guards"] = []any{obj{"variable": "x"}}
		}, CodeMissingField, "$.transitions[1].guards[0].value"},
		{"limits unknown", func(m obj) { m["limits"] = obj{"frames": 1} }, CodeUnknownField, "$.limits.frames"},
		{"limits connections max", func(m obj) { m["limits"] = obj{"connections": MaxLimitConnections} }, "", ""},
		{"limits connections max+1", func(m obj) { m["limits"] = obj{"connections": MaxLimitConnections + 1} }, CodeOutOfRange, "$.limits.connections"},
		{"limits messages 0", func(m obj) { m["limits"] = obj{"messages": 0} }, CodeOutOfRange, "$.limits.messages"},
		{"limits bytes max+1", func(m obj) { m["limits"] = obj{"bytes": MaxLimitBytes + 1} }, CodeOutOfRange, "$.limits.bytes"},
		{"limits duration max+1", func(m obj) { m["limits"] = obj{"duration_ms": MaxLimitDurationMS + 1} }, CodeOutOfRange, "$.limits.duration_ms"},
	})
}

func TestMachineDefaults(t *testing.T) {
	m, is := ParseMachine(mustJSON(t, baseMachine()))
	if len(is) > 0 {
		t.Fatal(issuesString(is))
	}
	if m.States[0].Terminal || m.States[0].MaxVisits != DefaultMaxVisits || m.Transitions[0].Priority != DefaultPriority {
		t.Fatalf("state/transition defaults: %+v %+v", m.States[0], m.Transitions[0])
	}
	if m.Limits != (Limits{100, 10000, 1_000_000, 30000}) {
		t.Fatalf("limit defaults: %+v", m.Limits)
	}
	tt := m.Transitions[0]
	if tt.Trigger.Body != nil || len(tt.Trigger.Headers) != 0 || tt.Guards == nil || tt.Captures == nil {
		t.Fatalf("trigger defaults: %+v", tt)
	}
}

func TestMachineDocumentRules(t *testing.T) {
	for _, tc := range []struct {
		name, doc, code, path string
	}{
		{"not an object", `[]`, CodeWrongType, "$"},
		{"duplicate key", `{"initial_state":"a","initial_state":"b"}`, CodeDuplicateKey, "$.initial_state"},
		{"own __proto__ key", `{"__proto__":{"initial_state":"x"}}`, CodeUnknownField, "$.__proto__"},
		{"malformed", `{"initial_state":`, CodeInvalidJSON, "$.initial_state"},
		{"trailing data", `{} {}`, CodeInvalidJSON, "$"},
		{"byte order mark", "\xef\xbb\xbf{}", CodeInvalidJSON, "$"},
		{"invalid utf-8", "{\"a\":\"\xff\"}", CodeInvalidUTF8, "$"},
		{"too deep", strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), CodeTooDeep, "$" + strings.Repeat("[0]", MaxDepth)},
		{"too many values", "[" + strings.Repeat("0,", MaxValues) + "0]", CodeTooLarge, "$[" + strconv.Itoa(MaxValues-1) + "]"},
		{"number out of range", `{"max_transitions":1e400}`, CodeInvalidValue, "$.max_transitions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, is := ParseMachine([]byte(tc.doc))
			if m != nil || !hasIssue(is, tc.code, tc.path) {
				t.Fatalf("want %s at %s; got:%s", tc.code, tc.path, issuesString(is))
			}
		})
	}
	root := "$.replay.machine"
	_, is := ParseMachineAt([]byte(`{"initial_state":1}`), root)
	if !hasIssue(is, CodeWrongType, root+".initial_state") || !hasIssue(is, CodeMissingField, root+".states") {
		t.Fatalf("rooted paths:%s", issuesString(is))
	}
	big := make([]byte, MaxInputBytes+1)
	if _, is := ParseMachine(big); !hasIssue(is, CodeTooLarge, "$") || len(is) != 1 {
		t.Fatalf("oversized:%s", issuesString(is))
	}
}

func TestMachineIssuesAreBounded(t *testing.T) {
	m := baseMachine()
	var states []any
	for i := range 500 {
		states = append(states, obj{"name": "bad name", "max_visits": -i})
	}
	m["states"] = states
	_, is := ParseMachine(mustJSON(t, m))
	if len(is) != MaxIssues || is[len(is)-1].Code != CodeTooManyIssues {
		t.Fatalf("%d issues, last %+v", len(is), is[len(is)-1])
	}
}

func TestMachineMarshalRoundTrip(t *testing.T) {
	src := baseMachine()
	tr(src, 0)["trigger"] = obj{"protocol": "http", "method": "POST", "path": "/a", "headers": obj{"X-Id": "1"}, "body": "b"}
	tr(src, 0)["captures"] = []any{obj{"variable": "x", "value": jsonSrc("request_json", "a", 0)}, obj{"variable": "h", "value": hdr("X-Id")}}
	tr(src, 1)["guards"] = []any{obj{"variable": "x", "value": jsonSrc("request_json", "a", 0)}}
	m, is := ParseMachine(mustJSON(t, src))
	if len(is) > 0 {
		t.Fatal(issuesString(is))
	}
	again, is := ParseMachine(mustJSON(t, m))
	if len(is) > 0 {
		t.Fatalf("re-parse:%s", issuesString(is))
	}
	a, b := string(mustJSON(t, m)), string(mustJSON(t, again))
	if a != b {
		t.Fatalf("round trip differs:\n%s\n%s", a, b)
	}
	if !strings.Contains(a, `"path":["a",0]`) || !strings.Contains(a, `"headers":{"x-id":"1"}`) {
		t.Fatalf("marshal shape: %s", a)
	}
}
