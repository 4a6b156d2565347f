package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// loopMachine has one state "start" with self-loops and an exit to the
// terminal "done" on GET /done.
func loopMachine(loops ...obj) obj {
	m := obj{
		"initial_state": "start",
		"states":        []any{obj{"name": "start"}, obj{"name": "done", "terminal": true}},
		"transitions": []any{
			obj{"id": "exit", "from": "start", "to": "done", "trigger": httpTrig("GET", "/done"), "actions": []any{resp(200, "")}, "max_uses": 1},
		},
		"max_transitions": 100,
	}
	for _, l := range loops {
		if _, ok := l["from"]; !ok {
			l["from"] = "start"
		}
		if _, ok := l["to"]; !ok {
			l["to"] = "start"
		}
		if _, ok := l["actions"]; !ok {
			l["actions"] = []any{resp(200, "")}
		}
		addTransition(m, l)
	}
	return m
}

func TestDispatchUnmatchedAndInvalidState(t *testing.T) {
	res := execute(t, baseMachine(), []any{
		req("GET", "/zzz"), // no trigger anywhere
		req("GET", "/b"),   // t2's trigger, but t2 leaves mid
		req("POST", "/a"),  // method differs
		req("GET", "/a"),
		req("GET", "/b"),
		req("GET", "/a"), // terminal: nothing leaves done
		req("GET", "/nowhere"),
	})
	wantOutcomes(t, res, OutcomeUnmatched, OutcomeInvalidState, OutcomeUnmatched, OutcomeCommitted, OutcomeCommitted, OutcomeInvalidState, OutcomeUnmatched)
	if res.FinalState != "done" || !res.Terminal || res.InitialState != "start" || res.SchemaVersion != 1 {
		t.Fatalf("result header: %+v", res)
	}
	if d := res.Decisions[3]; d.TransitionSequence == nil || *d.TransitionSequence != 0 || res.Decisions[0].TransitionSequence != nil {
		t.Fatalf("transition_sequence: %+v", res.Decisions)
	}
	j := res.TransitionJournal
	if len(j) != 2 || j[1].Sequence != 1 || j[1].EventSequence != 4 || j[1].StateBefore != "mid" || j[1].StateAfter != "done" || j[1].TransitionID != "t2" {
		t.Fatalf("journal: %+v", j)
	}
}

func TestDispatchTriggerMatching(t *testing.T) {
	m := loopMachine(
		obj{"id": "hdr", "trigger": obj{"protocol": "http", "method": "GET", "path": "/h", "headers": obj{"X-Mode": "a"}}, "max_uses": 10},
		obj{"id": "body", "trigger": obj{"protocol": "http", "method": "POST", "path": "/b", "body": `{"k":1}`}, "max_uses": 10},
	)
	withHeader := func(v string) obj {
		e := req("GET", "/h")
		e["headers"] = obj{"x-mode": v}
		return e
	}
	withBody := func(b any) obj {
		e := req("POST", "/b")
		e["body"] = b
		return e
	}
	res := execute(t, m, []any{withHeader("a"), withHeader("A"), req("GET", "/h"), withBody(`{"k":1}`), withBody(`{"k": 1}`), withBody(nil)})
	wantOutcomes(t, res, OutcomeCommitted, OutcomeUnmatched, OutcomeUnmatched, OutcomeCommitted, OutcomeUnmatched, OutcomeUnmatched)
}

func TestDispatchPriorityAndDeclarationOrder(t *testing.T) {
	m := loopMachine(
		obj{"id": "first", "trigger": obj{"protocol": "http", "method": "GET", "path": "/p", "headers": obj{"x-a": "1"}}, "max_uses": 10},
		obj{"id": "second", "trigger": httpTrig("GET", "/p"), "max_uses": 10},
		obj{"id": "high", "priority": 101, "trigger": obj{"protocol": "http", "method": "GET", "path": "/p", "headers": obj{"x-b": "1"}}, "max_uses": 10},
	)
	both := req("GET", "/p")
	both["headers"] = obj{"x-a": "1"}
	all := req("GET", "/p")
	all["headers"] = obj{"x-a": "1", "x-b": "1"}
	res := execute(t, m, []any{both, req("GET", "/p"), all})
	if got := strings.Join(journalIDs(res), ","); got != "first,second,high" {
		t.Fatalf("journal %s", got)
	}
}

func TestDispatchGuards(t *testing.T) {
	m := baseMachine()
	tr(m, 0)["captures"] = []any{obj{"variable": "n", "value": jsonSrc("request_json", "n")}}
	tr(m, 1)["guards"] = []any{obj{"variable": "n", "value": jsonSrc("request_json", "n")}}
	a := req("GET", "/a")
	a["body"] = `{"n":{"x":[1,2],"y":true}}`
	b := func(body any) obj {
		e := req("GET", "/b")
		e["body"] = body
		return e
	}
	res := execute(t, m, []any{a, b(`{"n":{"x":[1,2]}}`), b(nil), b(`not json`), b(`{"m":1}`), b(`{"n":{"y":true,"x":[1,2.0]}}`)})
	wantOutcomes(t, res, OutcomeCommitted, OutcomeGuardFailed, OutcomeGuardFailed, OutcomeGuardFailed, OutcomeGuardFailed, OutcomeCommitted)
}

func TestDispatchMaxTransitions(t *testing.T) {
	m := loopMachine(obj{"id": "loop", "trigger": httpTrig("GET", "/l"), "max_uses": 10})
	m["max_transitions"] = 2
	res := execute(t, m, []any{req("GET", "/l"), req("GET", "/l"), req("GET", "/l"), req("GET", "/done")})
	wantOutcomes(t, res, OutcomeCommitted, OutcomeCommitted, OutcomeTransitionExhausted, OutcomeTransitionExhausted)
	rt := runtimeFor(t, m)
	rt.Dispatch(Event{Type: EventHTTPRequest, Method: "GET", Path: "/l"})
	rt.Dispatch(Event{Type: EventHTTPRequest, Method: "GET", Path: "/l"})
	if d := rt.Dispatch(Event{Type: EventHTTPRequest, Method: "GET", Path: "/l"}); d.Reason != "max_transitions" {
		t.Fatalf("reason %q", d.Reason)
	}
}

func TestDispatchMaxUsesFallsBackToLowerPriority(t *testing.T) {
	m := loopMachine(
		obj{"id": "hi", "priority": 200, "trigger": httpTrig("GET", "/x"), "max_uses": 1, "actions": []any{resp(201, "hi")}},
		obj{"id": "lo", "priority": 100, "trigger": httpTrig("GET", "/x"), "max_uses": 2, "actions": []any{resp(202, "lo")}},
	)
	res := execute(t, m, []any{req("GET", "/x"), req("GET", "/x"), req("GET", "/x"), req("GET", "/x")})
	wantOutcomes(t, res, OutcomeCommitted, OutcomeCommitted, OutcomeCommitted, OutcomeTransitionExhausted)
	if got := strings.Join(journalIDs(res), ","); got != "hi,lo,lo" {
		t.Fatalf("journal %s", got)
	}
	if len(res.TransitionActions) != 2 || res.TransitionActions[0].TransitionID != "hi" || res.TransitionActions[1].Uses != 2 {
		t.Fatalf("action table %+v", res.TransitionActions)
	}
	// The live runtime hands the chosen transition's actions back.
	rt := runtimeFor(t, m)
	d1 := rt.Dispatch(Event{Type: EventHTTPRequest, Method: "GET", Path: "/x"})
	d2 := rt.Dispatch(Event{Type: EventHTTPRequest, Method: "GET", Path: "/x"})
	if d1.Actions[0].Status != 201 || d2.Actions[0].Status != 202 || d2.TransitionID != "lo" {
		t.Fatalf("actions %+v %+v", d1, d2)
	}
	rt.Dispatch(Event{Type: EventHTTPRequest, Method: "GET", Path: "/x"})
	if d4 := rt.Dispatch(Event{Type: EventHTTPRequest, Method: "GET", Path: "/x"}); d4.Reason != "max_uses" || d4.Actions != nil {
		t.Fatalf("spent: %+v", d4)
	}
}

func TestDispatchFallbackSkipsGuardFailures(t *testing.T) {
	// "lo" never passes its guard, so when "hi" is spent nothing is left:
	// guards run before max_uses, and the outcome is transition_exhausted.
	m := loopMachine(
		obj{"id": "cap", "trigger": httpTrig("POST", "/c"), "captures": []any{obj{"variable": "v", "value": jsonSrc("request_json", "v")}}, "max_uses": 1},
		obj{"id": "hi", "priority": 200, "trigger": httpTrig("GET", "/x"), "max_uses": 1},
		obj{"id": "lo", "priority": 100, "trigger": httpTrig("GET", "/x"), "guards": []any{obj{"variable": "v", "value": jsonSrc("request_json", "v")}}, "max_uses": 5},
	)
	// The guard on "lo" needs v captured on every path to start, which the
	// loop cannot give; the initial state has the empty path. So put the
	// loops on a second state reached by the capture.
	m["states"] = []any{obj{"name": "start"}, obj{"name": "ready"}, obj{"name": "done", "terminal": true}}
	tr(m, 0)["from"] = "ready"
	tr(m, 1)["to"] = "ready"
	for _, i := range []int{2, 3} {
		tr(m, i)["from"], tr(m, i)["to"] = "ready", "ready"
	}
	c := req("POST", "/c")
	c["body"] = `{"v":1}`
	x := func(v int) obj {
		e := req("GET", "/x")
		e["body"] = fmt.Sprintf(`{"v":%d}`, v)
		return e
	}
	res := execute(t, m, []any{c, x(2), x(2), x(1), x(1)})
	wantOutcomes(t, res, OutcomeCommitted, OutcomeCommitted, OutcomeTransitionExhausted, OutcomeCommitted, OutcomeCommitted)
	if got := strings.Join(journalIDs(res), ","); got != "cap,hi,lo,lo" {
		t.Fatalf("journal %s", got)
	}
}

func TestDispatchMaxVisits(t *testing.T) {
	m := loopMachine(obj{"id": "loop", "trigger": httpTrig("GET", "/l"), "max_uses": 10})
	st(m, 0)["max_visits"] = 3 // the initial visit counts
	res := execute(t, m, []any{req("GET", "/l"), req("GET", "/l"), req("GET", "/l"), req("GET", "/done")})
	wantOutcomes(t, res, OutcomeCommitted, OutcomeCommitted, OutcomeTransitionExhausted, OutcomeCommitted)
	if res.TransitionActions[0].Uses != 2 {
		t.Fatalf("uses %+v", res.TransitionActions)
	}
}

func TestDispatchInvalidCapture(t *testing.T) {
	m := loopMachine(
		obj{"id": "h", "trigger": httpTrig("GET", "/h"), "captures": []any{obj{"variable": "h", "value": hdr("X-Id")}}, "max_uses": 10},
		obj{"id": "j", "trigger": httpTrig("POST", "/j"), "captures": []any{obj{"variable": "j", "value": jsonSrc("request_json", "a", 1)}}, "max_uses": 10},
		obj{"id": "p", "trigger": httpTrig("POST", "/p"), "captures": []any{
			obj{"variable": "p", "value": jsonSrc("request_json", "__proto__")},
			obj{"variable": "c", "value": jsonSrc("request_json", "constructor")},
			obj{"variable": "s", "value": jsonSrc("request_json", "toString")},
		}, "max_uses": 10},
		obj{"id": "s", "trigger": httpTrig("POST", "/s"), "captures": []any{obj{"variable": "sec", "value": jsonSrc("request_json", "t"), "sensitive": true}}, "max_uses": 10},
	)
	post := func(path string, body any) obj {
		e := req("POST", path)
		e["body"] = body
		return e
	}
	h := req("GET", "/h")
	h["headers"] = obj{"x-id": "7"}
	res := execute(t, m, []any{
		req("GET", "/h"), h, // header absent, present (names are case-insensitive)
		post("/j", `{"a":[0]}`), post("/j", `{"a":{"1":"x"}}`), post("/j", `[]`), post("/j", nil), post("/j", `{"a":[0,"x"]}`),
		post("/p", `{}`), post("/p", `{"__proto__":1,"constructor":2}`), post("/p", `{"__proto__":1,"constructor":2,"toString":3}`),
		post("/s", `{"t":1}`), post("/s", `{"t":""}`), post("/s", `{"t":null}`), post("/s", `{"t":"ok"}`),
	})
	wantOutcomes(t, res,
		OutcomeInvalidCapture, OutcomeCommitted,
		OutcomeInvalidCapture, OutcomeInvalidCapture, OutcomeInvalidCapture, OutcomeInvalidCapture, OutcomeCommitted,
		OutcomeInvalidCapture, OutcomeInvalidCapture, OutcomeCommitted,
		OutcomeInvalidCapture, OutcomeInvalidCapture, OutcomeInvalidCapture, OutcomeCommitted,
	)
}

func wsEvent(typ, conn string) obj {
	e := obj{"type": typ, "connection": conn}
	if typ == EventWebSocketConnect {
		e["path"] = "/ws"
	}
	return e
}

func wsMsgEvent(conn, body string) obj {
	e := wsEvent(EventWebSocketMessage, conn)
	e["body"] = body
	return e
}

func TestDispatchWebSocket(t *testing.T) {
	m := obj{
		"initial_state": "idle",
		"states":        []any{obj{"name": "idle"}, obj{"name": "open"}, obj{"name": "closed", "terminal": true}},
		"transitions": []any{
			obj{"id": "connect", "from": "idle", "to": "open", "trigger": obj{"protocol": "websocket_connect", "path": "/ws"}, "actions": []any{obj{"type": "websocket_send", "data": `{"hello":"x"}`}}, "max_uses": 5},
			obj{"id": "ping", "from": "open", "to": "open", "trigger": obj{"protocol": "websocket_message", "path": "/ws"},
				"captures": []any{obj{"variable": "id", "value": jsonSrc("websocket_json", "id")}},
				"actions":  []any{obj{"type": "websocket_send", "data": "pong"}}, "max_uses": 5},
			obj{"id": "bye", "from": "open", "to": "idle", "priority": 200, "trigger": obj{"protocol": "websocket_message", "path": "/ws", "body": "bye"}, "actions": []any{obj{"type": "disconnect"}}, "max_uses": 5},
			obj{"id": "close", "from": "idle", "to": "closed", "trigger": httpTrig("POST", "/close"), "actions": []any{resp(204, "")}, "max_uses": 1},
		},
		"max_transitions": 100,
	}
	res := execute(t, m, []any{
		wsMsgEvent("c1", `{"id":1}`),                   // not connected yet
		wsEvent(EventWebSocketConnect, "c1"),           // committed
		wsEvent(EventWebSocketConnect, "c1"),           // reconnect while open
		wsMsgEvent("c1", `{"id":1}`),                   // ping
		wsMsgEvent("c1", `{"no":1}`),                   // ping without id
		wsMsgEvent("c2", `{"id":1}`),                   // unknown connection
		wsMsgEvent("c1", "bye"),                        // disconnect
		wsMsgEvent("c1", `{"id":2}`),                   // connection closed
		wsEvent(EventWebSocketConnect, "c1"),           // reconnect after close
		wsEvent(EventWebSocketConnect, "c2"),           // a new connection is fine
		req("POST", "/close"),                          // state is open: invalid_state
		wsMsgEvent("c2", "bye"), req("POST", "/close"), // back to idle, then terminal
	})
	wantOutcomes(t, res,
		OutcomeInvalidState, OutcomeCommitted, OutcomeUnexpectedReconnect, OutcomeCommitted, OutcomeInvalidCapture,
		OutcomeInvalidState, OutcomeCommitted, OutcomeInvalidState, OutcomeUnexpectedReconnect, OutcomeCommitted,
		OutcomeInvalidState, OutcomeCommitted, OutcomeCommitted)
	if !res.Terminal || res.FinalState != "closed" {
		t.Fatalf("final %s", res.FinalState)
	}
	if u := res.Limits.Usage; u.Connections != 6 || u.Messages != 9 {
		t.Fatalf("usage %+v", u)
	}
}

func TestDispatchLimits(t *testing.T) {
	loop := obj{"id": "loop", "trigger": httpTrig("POST", "/l"), "max_uses": 100}
	post := func(body string, conn string, at int) obj {
		e := req("POST", "/l")
		e["body"] = body
		if conn != "" {
			e["connection"] = conn
		}
		e["at_ms"] = at
		return e
	}
	for _, tc := range []struct {
		name   string
		limits obj
		events []any
		want   []string
		usage  Limits
	}{
		{"connections", obj{"connections": 2}, []any{post("", "", 0), post("", "k", 0), post("", "k", 0), post("", "", 0), post("", "k", 0)},
			[]string{OutcomeCommitted, OutcomeCommitted, OutcomeCommitted, OutcomeLimitExhausted, OutcomeCommitted}, Limits{2, 4, 0, 0}},
		{"messages", obj{"messages": 2}, []any{post("a", "", 0), post("b", "", 0), post("c", "", 0)},
			[]string{OutcomeCommitted, OutcomeCommitted, OutcomeLimitExhausted}, Limits{2, 2, 2, 0}},
		{"bytes", obj{"bytes": 5}, []any{post("abc", "", 0), post("abc", "", 0), post("ab", "", 0), post("", "", 0)},
			[]string{OutcomeCommitted, OutcomeLimitExhausted, OutcomeCommitted, OutcomeCommitted}, Limits{3, 3, 5, 0}},
		{"duration", obj{"duration_ms": 100}, []any{post("", "", 0), post("", "", 100), post("", "", 101)},
			[]string{OutcomeCommitted, OutcomeCommitted, OutcomeLimitExhausted}, Limits{2, 2, 0, 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := loopMachine(obj{"id": loop["id"], "trigger": loop["trigger"], "max_uses": loop["max_uses"]})
			m["limits"] = tc.limits
			res := execute(t, m, tc.events)
			wantOutcomes(t, res, tc.want...)
			if res.Limits.Usage != tc.usage {
				t.Fatalf("usage %+v, want %+v", res.Limits.Usage, tc.usage)
			}
		})
	}
}

func TestRefusedEventsStillCountTowardUsage(t *testing.T) {
	m := loopMachine(obj{"id": "loop", "trigger": httpTrig("POST", "/l"), "max_uses": 1})
	m["limits"] = obj{"messages": 4, "bytes": 100}
	post := func(path, body string) obj {
		e := req("POST", path)
		e["body"] = body
		return e
	}
	res := execute(t, m, []any{
		post("/zzz", "12345"), // unmatched
		post("/done", "1"),    // wrong method: unmatched
		post("/l", "12"),      // committed
		post("/l", "123"),     // max_uses spent
		post("/l", ""),        // the fifth message is not admitted
	})
	wantOutcomes(t, res, OutcomeUnmatched, OutcomeUnmatched, OutcomeCommitted, OutcomeTransitionExhausted, OutcomeLimitExhausted)
	if u := res.Limits.Usage; u.Messages != 4 || u.Bytes != 11 || u.Connections != 4 {
		t.Fatalf("usage %+v", u)
	}
	if res.Limits.Configured.Messages != 4 || res.Limits.Configured.DurationMS != DefaultLimitDurationMS {
		t.Fatalf("configured %+v", res.Limits.Configured)
	}
}

// loginMachine: POST /login captures the Authorization header as the
// sensitive alias "token" and answers with an issued session id that is
// itself captured (sensitive, from the action); GET /profile is guarded
// on both; GET /logout reaches the terminal state.
func loginMachine() obj {
	return obj{
		"initial_state": "anonymous",
		"states":        []any{obj{"name": "anonymous"}, obj{"name": "signed_in"}, obj{"name": "signed_out", "terminal": true}},
		"transitions": []any{
			obj{"id": "login", "from": "anonymous", "to": "signed_in",
				"trigger": obj{"protocol": "http", "method": "POST", "path": "/login", "headers": obj{"content-type": "application/json"}},
				"captures": []any{
					obj{"variable": "token", "value": hdr("Authorization"), "sensitive": true},
					obj{"variable": "user", "value": jsonSrc("request_json", "user")},
					obj{"variable": "session", "value": jsonSrc("action_json", "session"), "sensitive": true},
				},
				"actions": []any{obj{"type": "http_response", "status": 200,
					"headers": obj{"Set-Cookie": "sid=SESSION-7f3a; HttpOnly", "x-echo": "Bearer hunter2-secret"},
					"body":    `{"session":"SESSION-7f3a","note":"your token is Bearer hunter2-secret"}`}},
				"max_uses": 1},
			obj{"id": "profile", "from": "signed_in", "to": "signed_in",
				"trigger": httpTrig("GET", "/profile"),
				"guards": []any{
					obj{"variable": "token", "value": hdr("authorization")},
					obj{"variable": "session", "value": hdr("x-session")},
				},
				"actions": []any{resp(200, `{"name":"ann"}`)}, "max_uses": 3},
			obj{"id": "logout", "from": "signed_in", "to": "signed_out", "trigger": httpTrig("GET", "/logout"), "actions": []any{resp(204, "")}, "max_uses": 1},
		},
		"max_transitions": 10,
	}
}

func TestLoginFlowNeverOutputsTheSecret(t *testing.T) {
	const secret = "Bearer hunter2-secret"
	login := req("POST", "/login")
	login["headers"] = obj{"Authorization": secret, "Content-Type": "application/json"}
	login["body"] = `{"user":"ann-the-user","password":"pw-hunter2-secret"}`
	profile := func(auth, session string) obj {
		e := req("GET", "/profile")
		e["headers"] = obj{"authorization": auth, "x-session": session}
		return e
	}
	res := execute(t, loginMachine(), []any{
		profile(secret, "SESSION-7f3a"), // before login: invalid_state
		login,
		profile("Bearer wrong", "SESSION-7f3a"),
		profile(secret, "SESSION-nope"),
		profile(secret, "SESSION-7f3a"),
		req("GET", "/logout"),
	})
	wantOutcomes(t, res, OutcomeInvalidState, OutcomeCommitted, OutcomeGuardFailed, OutcomeGuardFailed, OutcomeCommitted, OutcomeCommitted)
	if res.FinalState != "signed_out" || !res.Terminal {
		t.Fatalf("final %s terminal %v", res.FinalState, res.Terminal)
	}
	if got := res.TransitionJournal[0].SensitiveAliases; strings.Join(got, ",") != "token,session" {
		t.Fatalf("aliases %v", got)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, s := range []string{secret, "hunter2", "SESSION-7f3a", "ann-the-user", "pw-hunter2-secret", "password"} {
		if strings.Contains(text, s) {
			t.Errorf("output contains %q:\n%s", s, text)
		}
	}
	act := res.TransitionActions[0].Actions[0]
	if act.Body != `{"session":"<secret:session>","note":"your token is <secret:token>"}` ||
		act.Headers["set-cookie"] != "sid=<secret:session>; HttpOnly" || act.Headers["x-echo"] != "<secret:token>" {
		t.Errorf("redacted action %+v", act)
	}
	// json.Marshal's HTML escaping does not reveal it either.
	if b := mustJSON(t, res); bytes.Contains(b, []byte("hunter2")) || bytes.Contains(b, []byte("7f3a")) {
		t.Fatalf("marshal leaks: %s", b)
	}
}

func TestRedactionPrefersLongerSecrets(t *testing.T) {
	m := loopMachine(obj{"id": "cap", "trigger": httpTrig("POST", "/c"), "captures": []any{
		obj{"variable": "short", "value": jsonSrc("request_json", "a"), "sensitive": true},
		obj{"variable": "long", "value": jsonSrc("request_json", "b"), "sensitive": true},
	}, "actions": []any{resp(200, "abc abcdef")}, "max_uses": 1})
	c := req("POST", "/c")
	c["body"] = `{"a":"abc","b":"abcdef"}`
	res := execute(t, m, []any{c})
	if got := res.TransitionActions[0].Actions[0].Body; got != "<secret:short> <secret:long>" {
		t.Fatalf("body %q", got)
	}
}

func TestSensitiveCapturesAtTheBoundAreAllRedacted(t *testing.T) {
	m := sensitiveCaptureMachine(MaxSensitiveCaptureOps, MaxSensitiveCaptureOps)
	events := keyedEvents(MaxSensitiveCaptureOps, "key-%04d-zz")
	res := execute(t, m, events)
	if len(res.TransitionJournal) != MaxSensitiveCaptureOps {
		t.Fatalf("%d transitions", len(res.TransitionJournal))
	}
	if b := mustJSON(t, res); bytes.Contains(b, []byte("-zz")) {
		t.Fatal("a captured key appears in the output")
	}
}

func TestRuntimeConcurrentDispatch(t *testing.T) {
	m := loopMachine(obj{"id": "loop", "trigger": httpTrig("GET", "/l"), "max_uses": 50})
	rt := runtimeFor(t, m)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 10 {
				rt.Dispatch(Event{Type: EventHTTPRequest, Method: "GET", Path: "/l"})
				_ = rt.Result()
			}
		})
	}
	wg.Wait()
	res := rt.Result()
	if len(res.Decisions) != 160 || len(res.TransitionJournal) != 50 {
		t.Fatalf("%d decisions, %d transitions", len(res.Decisions), len(res.TransitionJournal))
	}
	for i, d := range res.Decisions {
		if d.EventSequence != i {
			t.Fatalf("decision %d has sequence %d", i, d.EventSequence)
		}
	}
}

func TestNewRuntimeNeedsAParsedMachine(t *testing.T) {
	if _, err := NewRuntime(&Machine{}); err != ErrNotValidated {
		t.Fatalf("err %v", err)
	}
	if _, err := NewRuntime(nil); err != ErrNotValidated {
		t.Fatalf("err %v", err)
	}
}

func runtimeFor(t *testing.T, m obj) *Runtime {
	t.Helper()
	mm, is := ParseMachine(mustJSON(t, m))
	if len(is) > 0 {
		t.Fatal(issuesString(is))
	}
	rt, err := NewRuntime(mm)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}
