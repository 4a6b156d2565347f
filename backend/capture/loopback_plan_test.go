package capture

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/backend/loopback"
)

// lbValidMachine is the smallest valid replay machine: GET /done ends it.
func lbValidMachine() obj {
	return obj{"initial_state": "start", "max_transitions": 10,
		"states": []any{obj{"name": "start"}, obj{"name": "done", "terminal": true}},
		"transitions": []any{obj{"id": "finish", "from": "start", "to": "done", "max_uses": 1,
			"trigger": obj{"protocol": "http", "method": "GET", "path": "/done"},
			"actions": []any{obj{"type": "http_response", "status": 200, "body": "bye"}}}}}
}

func lbHttpRoute1() obj { return obj{"method": "GET", "path": "/a"} }

func TestReplayPlanRules(t *testing.T) {
	onHTTP := func(k string, v any) func(obj) {
		return func(m obj) {
			r := lbHttpRoute1()
			r[k] = v
			m["replay"] = obj{"http": []any{r}}
		}
	}
	onConn := func(k string, v any) func(obj) {
		return func(m obj) { m["replay"] = obj{"websocket_connections": []any{obj{"path": "/ws", k: v}}} }
	}
	onMsg := func(k string, v any) func(obj) {
		return func(m obj) { m["replay"] = obj{"websocket_messages": []any{obj{"path": "/ws", k: v}}} }
	}
	bad := lbValidMachine()
	bad["states"] = []any{obj{"name": "start"}}
	info := lbValidMachine()
	info["transitions"].([]any)[0].(obj)["actions"] = []any{obj{"type": "http_response", "status": 101}}
	hopHeader := lbValidMachine()
	hopHeader["transitions"].([]any)[0].(obj)["actions"] = []any{obj{"type": "http_response", "status": 200, "headers": obj{"Content-Length": "3"}}}
	runRules(t, []ruleCase{
		{"http minimal", onHTTP("max_calls", 1), "", ""},
		{"http method missing", func(m obj) { m["replay"] = obj{"http": []any{obj{"path": "/"}}} }, CodeMissingField, "$.replay.http[0].method"},
		{"http path missing", func(m obj) { m["replay"] = obj{"http": []any{obj{"method": "GET"}}} }, CodeMissingField, "$.replay.http[0].path"},
		{"http method lower", onHTTP("method", "get"), CodeInvalidName, "$.replay.http[0].method"},
		{"http path relative", onHTTP("path", "a"), CodeInvalidName, "$.replay.http[0].path"},
		{"http path space", onHTTP("path", "/a b"), CodeInvalidName, "$.replay.http[0].path"},
		{"http path 2048", onHTTP("path", "/"+strings.Repeat("a", 2047)), "", ""},
		{"http path 2049", onHTTP("path", "/"+strings.Repeat("a", 2048)), CodeInvalidName, "$.replay.http[0].path"},
		{"http unknown", onHTTP("status", 200), CodeUnknownField, "$.replay.http[0].status"},
		{"http credential header", onHTTP("headers", obj{"Authorization": "Bearer x"}), CodeCredentialHeader, `$.replay.http[0].headers.Authorization`},
		{"http cookie header", onHTTP("headers", obj{"cookie": "a=b"}), CodeCredentialHeader, `$.replay.http[0].headers.cookie`},
		{"http header name", onHTTP("headers", obj{"a b": "x"}), CodeInvalidName, `$.replay.http[0].headers["a b"]`},
		{"http header dup", onHTTP("headers", obj{"X-A": "1", "x-a": "2"}), CodeDuplicateEntry, `$.replay.http[0].headers["x-a"]`},
		{"http header CR", onHTTP("headers", obj{"x-a": "1\r2"}), CodeInvalidValue, `$.replay.http[0].headers["x-a"]`},
		{"http body number", onHTTP("body", 1), CodeWrongType, "$.replay.http[0].body"},
		{"http body null", onHTTP("body", nil), "", ""},
		{"http delay max", onHTTP("delay_ms", 300000), "", ""},
		{"http delay max+1", onHTTP("delay_ms", 300001), CodeOutOfRange, "$.replay.http[0].delay_ms"},
		{"http delay negative", onHTTP("delay_ms", -1), CodeOutOfRange, "$.replay.http[0].delay_ms"},
		{"http max_calls 0", onHTTP("max_calls", 0), CodeOutOfRange, "$.replay.http[0].max_calls"},
		{"http max_calls max", onHTTP("max_calls", loopback.MaxReplayCalls), "", ""},
		{"http max_calls max+1", onHTTP("max_calls", loopback.MaxReplayCalls+1), CodeOutOfRange, "$.replay.http[0].max_calls"},
		{"http status 199", onHTTP("response", obj{"status": 199}), CodeOutOfRange, "$.replay.http[0].response.status"},
		{"http status 600", onHTTP("response", obj{"status": 600}), CodeOutOfRange, "$.replay.http[0].response.status"},
		{"http response unknown", onHTTP("response", obj{"code": 200}), CodeUnknownField, "$.replay.http[0].response.code"},
		{"http response transport header", onHTTP("response", obj{"headers": obj{"Transfer-Encoding": "chunked"}}), CodeInvalidName, `$.replay.http[0].response.headers["Transfer-Encoding"]`},
		{"http response null", onHTTP("response", nil), CodeConflict, "$.replay.http[0].response"},
		{"http disconnect with response", func(m obj) {
			m["replay"] = obj{"http": []any{obj{"method": "GET", "path": "/", "disconnect": true, "response": obj{}}}}
		}, CodeConflict, "$.replay.http[0].response"},
		{"http disconnect", onHTTP("disconnect", true), "", ""},
		{"http too many", func(m obj) {
			m["replay"] = obj{"http": list(loopback.MaxReplayRoutes+1, func(int) any { return lbHttpRoute1() })}
		}, CodeTooManyEntries, "$.replay.http"},
		{"conn messages", onConn("messages", []any{obj{"delay_ms": 0, "data": "a"}, obj{"delay_ms": 5, "data": "b"}}), "", ""},
		{"conn messages unsorted", onConn("messages", []any{obj{"delay_ms": 5, "data": "a"}, obj{"delay_ms": 4, "data": "b"}}), CodeNotSorted, "$.replay.websocket_connections[0].messages[1].delay_ms"},
		{"conn message data missing", onConn("messages", []any{obj{"delay_ms": 5}}), CodeMissingField, "$.replay.websocket_connections[0].messages[0].data"},
		{"conn disconnect early", func(m obj) {
			m["replay"] = obj{"websocket_connections": []any{obj{"path": "/ws", "messages": []any{obj{"delay_ms": 5, "data": "a"}}, "disconnect_after_ms": 4}}}
		}, CodeNotSorted, "$.replay.websocket_connections[0].disconnect_after_ms"},
		{"conn disconnect null", onConn("disconnect_after_ms", nil), "", ""},
		{"conn credential", onConn("headers", obj{"proxy-authorization": "x"}), CodeCredentialHeader, `$.replay.websocket_connections[0].headers["proxy-authorization"]`},
		{"conn too many messages", onConn("messages", list(loopback.MaxReplayMessages+1, func(int) any { return obj{"delay_ms": 0, "data": ""} })), CodeTooManyEntries, "$.replay.websocket_connections[0].messages"},
		{"conn max messages", onConn("messages", list(loopback.MaxReplayMessages, func(int) any { return obj{"delay_ms": 0, "data": ""} })), "", ""},
		{"msg replies", onMsg("replies", []any{obj{"delay_ms": 1, "data": "x"}}), "", ""},
		{"msg body", onMsg("body", "ping"), "", ""},
		{"msg unknown", onMsg("headers", obj{}), CodeUnknownField, "$.replay.websocket_messages[0].headers"},
		{"msg disconnect string", onMsg("disconnect", "yes"), CodeWrongType, "$.replay.websocket_messages[0].disconnect"},
		{"machine invalid", setIn("replay", "machine", bad), "no_terminal_state", "$.replay.machine.states"},
		{"machine 1xx", setIn("replay", "machine", info), CodeOutOfRange, "$.replay.machine.transitions[0].actions[0].status"},
		{"machine transport header", setIn("replay", "machine", hopHeader), CodeInvalidName, `$.replay.machine.transitions[0].actions[0].headers["content-length"]`},
	})
}

// The scenario keeps scripts and machines in their defaulted form, which
// re-parses to itself; spelling defaults out changes no commitment.
func TestReplayPlanDefaults(t *testing.T) {
	short := minimal()
	short["replay"] = obj{"http": []any{lbHttpRoute1()}, "websocket_connections": []any{obj{"path": "/ws"}}, "websocket_messages": []any{obj{"path": "/ws"}}}
	long := minimal()
	long["replay"] = obj{
		"http": []any{obj{"method": "GET", "path": "/a", "headers": obj{}, "body": nil, "response": obj{"status": 200, "headers": obj{}, "body": ""},
			"delay_ms": 0, "disconnect": false, "max_calls": 1}},
		"websocket_connections": []any{obj{"path": "/ws", "headers": obj{}, "messages": []any{}, "disconnect_after_ms": nil, "max_calls": 1}},
		"websocket_messages":    []any{obj{"path": "/ws", "body": nil, "replies": []any{}, "disconnect": false, "max_calls": 1}},
	}
	a, b := parseOK(t, mustJSON(t, short)), parseOK(t, mustJSON(t, long))
	if ca, cb := commitments(t, a), commitments(t, b); ca.ReplayPlanSHA256 != cb.ReplayPlanSHA256 {
		t.Fatalf("replay plans differ:\n%s\n%s", ca.ReplayPlan, cb.ReplayPlan)
	}
	if got := string(a.Replay.HTTP[0]); got != `{"method":"GET","path":"/a","headers":{},"body":null,"response":{"status":200,"headers":{},"body":""},"delay_ms":0,"disconnect":false,"max_calls":1}` {
		t.Errorf("defaulted http route %s", got)
	}
	m := minimal()
	m["replay"] = obj{"machine": lbValidMachine()}
	sc := parseOK(t, mustJSON(t, m))
	var mach map[string]any
	if err := json.Unmarshal(sc.Replay.Machine, &mach); err != nil || mach["limits"] == nil {
		t.Fatalf("machine not defaulted: %s", sc.Replay.Machine)
	}
	again, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	sc2 := parseOK(t, again)
	if string(sc2.Replay.Machine) != string(sc.Replay.Machine) {
		t.Errorf("machine does not re-parse to itself:\n%s\n%s", sc.Replay.Machine, sc2.Replay.Machine)
	}
	if l, err := newLoopback(sc2); err != nil || l == nil {
		t.Errorf("plan of a parsed scenario: %v", err)
	} else {
		l.Stop()
	}
	bad := *sc2
	bad.Replay.HTTP = []json.RawMessage{json.RawMessage(`{"method":"GET"}`)}
	if _, err := newLoopback(&bad); err == nil || !strings.Contains(err.Error(), "capture: replay: invalid scenario: ") || !strings.Contains(err.Error(), "$.replay.http[0].path") {
		t.Errorf("hand-built invalid plan: %v", err)
	}
}

// TestReplayBoundsAndCodesAreTheScenarios: the replay object's bound on
// delays is the scenario's timeout bound, and the codes backend/loopback
// reports for it are the scenario's codes of the same name.
func TestReplayBoundsAndCodesAreTheScenarios(t *testing.T) {
	if loopback.MaxReplayDelayMS != MaxTimeoutMS {
		t.Errorf("loopback.MaxReplayDelayMS %d, MaxTimeoutMS %d", loopback.MaxReplayDelayMS, MaxTimeoutMS)
	}
	for _, c := range [][2]string{{loopback.CodeConflict, CodeConflict}, {loopback.CodeInvalidName, CodeInvalidName},
		{loopback.CodeDuplicateEntry, CodeDuplicateEntry}, {loopback.CodeNotSorted, CodeNotSorted}} {
		if c[0] != c[1] {
			t.Errorf("loopback code %q, scenario code %q", c[0], c[1])
		}
	}
}
