package replay

import (
	"encoding/json"
	"testing"
)

func checkIssues(t *testing.T, is []Issue) {
	t.Helper()
	if len(is) > MaxIssues {
		t.Fatalf("%d issues", len(is))
	}
	for _, i := range is {
		if i.Code == "" || i.Path == "" || i.Path[0] != '$' || i.Message == "" {
			t.Fatalf("issue without code, path or message: %+v", i)
		}
	}
}

// eventsFor offers one event per transition, shaped after its trigger.
func eventsFor(m *Machine) []Event {
	var out []Event
	for _, t := range m.Transitions {
		ev := Event{Connection: "c-" + t.ID, Method: t.Trigger.Method, Path: t.Trigger.Path, Headers: t.Trigger.Headers, Body: t.Trigger.Body}
		switch t.Trigger.Protocol {
		case ProtocolHTTP:
			ev.Type, ev.Connection = EventHTTPRequest, ""
		case ProtocolWebSocketConnect:
			ev.Type = EventWebSocketConnect
		default:
			ev.Type = EventWebSocketMessage
		}
		out = append(out, ev, ev)
	}
	return out
}

func FuzzParseMachine(f *testing.F) {
	f.Add(mustJSON(f, baseMachine()))
	f.Add(mustJSON(f, loginMachine()))
	f.Add(mustJSON(f, loopMachine(obj{"id": "hi", "priority": 200, "trigger": httpTrig("GET", "/x"), "max_uses": 1})))
	f.Add([]byte(`{"initial_state":"a","states":[{"name":"a","terminal":true}],"transitions":[],"max_transitions":1}`))
	f.Add([]byte(`{"__proto__":{},"constructor":1,"initial_state":"toString"}`))
	f.Add([]byte(`{"initial_state":"a","states":[{"name":"a"}],"transitions":[{"id":"x","from":"a","to":"a","trigger":{"protocol":"websocket_message","path":"/"},"guards":[{"variable":"v","value":{"source":"action_json","path":["__proto__",0]}}],"actions":[{"type":"websocket_send","data":"{\"__proto__\":[1]}"}],"max_uses":1}],"max_transitions":1}`))
	f.Add([]byte(`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[`))
	f.Add([]byte("\xef\xbb\xbf{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, is := ParseMachine(data)
		checkIssues(t, is)
		if (m == nil) == (len(is) == 0) {
			t.Fatalf("machine %v with issues %v", m, is)
		}
		if m == nil {
			return
		}
		again, is := ParseMachine(mustJSON(t, m))
		if again == nil {
			t.Fatalf("an accepted machine does not re-parse:%s", issuesString(is))
		}
		rt, err := NewRuntime(m)
		if err != nil {
			t.Fatal(err)
		}
		evs := eventsFor(m)
		for _, ev := range evs {
			rt.Dispatch(ev)
		}
		res := rt.Result()
		if len(res.Decisions) != len(evs) || len(res.TransitionJournal) > m.MaxTransitions {
			t.Fatalf("%d decisions for %d events, %d transitions", len(res.Decisions), len(evs), len(res.TransitionJournal))
		}
		if _, err := json.Marshal(res); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzParseRun(f *testing.F) {
	f.Add(mustJSON(f, obj{"machine": loginMachine(), "events": []any{
		obj{"type": "http_request", "method": "POST", "path": "/login", "headers": obj{"authorization": "Bearer s", "content-type": "application/json"}, "body": `{"user":"u"}`},
		obj{"type": "http_request", "method": "GET", "path": "/profile", "headers": obj{"authorization": "Bearer s", "x-session": "SESSION-7f3a"}},
	}}))
	f.Add([]byte(`{"machine":{},"events":[{"type":"websocket_message","connection":"c","body":"{}"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		run, is := ParseRun(data)
		checkIssues(t, is)
		if (run == nil) == (len(is) == 0) {
			t.Fatalf("run %v with issues %v", run, is)
		}
		if run == nil {
			return
		}
		if len(run.Events) > MaxEvents {
			t.Fatalf("%d events", len(run.Events))
		}
		res, err := Execute(run)
		if err != nil {
			t.Fatal(err)
		}
		committed := 0
		for i, d := range res.Decisions {
			if d.EventSequence != i {
				t.Fatalf("decision %d has sequence %d", i, d.EventSequence)
			}
			if d.Outcome == OutcomeCommitted {
				if d.TransitionSequence == nil || *d.TransitionSequence != committed {
					t.Fatalf("decision %d: transition_sequence %v", i, d.TransitionSequence)
				}
				committed++
			} else if d.TransitionSequence != nil {
				t.Fatalf("refused decision %d has a transition", i)
			}
		}
		if len(res.Decisions) != len(run.Events) || committed != len(res.TransitionJournal) {
			t.Fatalf("%d decisions, %d events, %d committed, %d journal", len(res.Decisions), len(run.Events), committed, len(res.TransitionJournal))
		}
	})
}
