package compare

import (
	"slices"
	"testing"
)

// wsEvent and httpEvent are loopback protocol events as the capture
// records them (backend/capture/loopback.go).
func wsEvent(direction, path, data, outcome string) obj {
	var method any
	if direction == "request" || direction == "response" {
		method = "GET"
	}
	return obj{"protocol": "websocket", "direction": direction, "method": method, "path": path, "data": data, "outcome": outcome}
}

func httpEvent(direction, path, data, outcome string) obj {
	return obj{"protocol": "http", "direction": direction, "method": "GET", "path": path, "data": data, "outcome": outcome}
}

// withProtocol is baseRecord with these protocol events, numbered and
// timed in the given order.
func withProtocol(events ...obj) obj {
	r := baseRecord()
	list := arr{}
	for i, e := range events {
		e = clone(e)
		e["sequence"], e["at_ms"] = i, 30+10*i
		list = append(list, e)
	}
	r["protocol_events"] = list
	return r
}

// Two WebSocket connections and one HTTP exchange, opened in this order;
// only how their events interleave differs between the two runs.
var (
	openA   = []obj{wsEvent("request", "/a", "", "matched"), wsEvent("response", "/a", "", "101")}
	openB   = []obj{wsEvent("request", "/b", "", "matched"), wsEvent("response", "/b", "", "101")}
	talkA   = []obj{wsEvent("received", "/a", "<redacted-request-body>", "matched"), wsEvent("sent", "/a", "pong a", "sent")}
	talkB   = []obj{wsEvent("received", "/b", "<redacted-request-body>", "matched"), wsEvent("sent", "/b", "pong b", "sent")}
	askX    = httpEvent("request", "/x", "", "matched")
	answerX = httpEvent("response", "/x", "hi", "200")
)

func seq(parts ...[]obj) []obj { return slices.Concat(parts...) }

// TestBehaviorProtocolPerConnection: interleaving across connections is no
// difference in behavior mode (it is in exact mode); the order within a
// connection, the order connections opened in and any field of any event
// are.
func TestBehaviorProtocolPerConnection(t *testing.T) {
	left := env(t, withProtocol(seq(openA, openB, []obj{askX}, talkA, talkB, []obj{answerX})...))
	right := env(t, withProtocol(seq(openA, openB, []obj{askX, answerX}, talkB, talkA)...))
	res := mustCompare(t, left, right, Options{})
	wantStatuses(t, res, Unchanged, nil)
	if ex := mustCompare(t, left, right, Options{Mode: ModeExact}); ex.Protocol != Changed {
		t.Fatalf("exact: protocol %s, want changed", ex.Protocol)
	}

	// Concurrent HTTP exchanges answered in the other order.
	askY, answerY := httpEvent("request", "/y", "", "matched"), httpEvent("response", "/y", "yo", "200")
	res = mustCompare(t, env(t, withProtocol(askX, askY, answerX, answerY)), env(t, withProtocol(askX, askY, answerY, answerX)), Options{})
	wantStatuses(t, res, Unchanged, nil)

	changedB := clone(talkB[1])
	changedB["data"] = "pang b"
	for _, tc := range []struct {
		name  string
		right []obj
		index int
		field string
	}{
		// One field of one connection's event: that event is the divergence.
		{"one field", seq(openA, openB, []obj{askX, answerX}, []obj{talkB[0], changedB}, talkA), 7, "data"},
		// Within one connection, the reply before the message.
		{"order within a connection", seq(openA, openB, []obj{askX, answerX}, []obj{talkB[1], talkB[0]}, talkA), 6, "direction"},
		// B opened before A.
		{"connection order", seq(openB, openA, []obj{askX}, talkA, talkB, []obj{answerX}), 0, "path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := mustCompare(t, left, env(t, withProtocol(tc.right...)), Options{DiffLimit: 50})
			wantStatuses(t, res, Changed, map[string]Status{"protocol": Changed})
			fd := res.FirstDivergence
			if fd.Dimension != "protocol" || fd.Index != tc.index || !slices.Contains(res.DivergenceFields, tc.field) {
				t.Fatalf("first divergence %s, fields %v; want protocol naming %s", fmtJSON(fd), res.DivergenceFields, tc.field)
			}
			if tc.name == "one field" {
				l, _ := fd.Left.(map[string]any)
				r, _ := fd.Right.(map[string]any)
				if l["data"] != "pong b" || r["data"] != "pang b" || !slices.Equal(res.DivergenceFields, []string{"data"}) {
					t.Fatalf("first divergence %s fields %v", fmtJSON(fd), res.DivergenceFields)
				}
				// It points at the item in each record, whatever its position in
				// the other side's list.
				if fd.LeftLocation != "$.normalized_result.protocol_events[8]" || fd.RightLocation != "$.normalized_result.protocol_events[7]" {
					t.Fatalf("locations %s %s", fd.LeftLocation, fd.RightLocation)
				}
				if n := len(res.Diffs[dimProtocol].Items); n != 1 {
					t.Fatalf("%d protocol differences listed, want 1: %s", n, fmtJSON(res.Diffs[dimProtocol]))
				}
			}
		})
	}
}

// TestProtocolConnectionsRecovery: how events are assigned to connections.
func TestProtocolConnectionsRecovery(t *testing.T) {
	rec := withProtocol(
		httpEvent("request", "/x", "", "matched"), // 0: exchange 1
		httpEvent("request", "/x", "", "matched"), // 1: exchange 2, same route
		wsEvent("request", "/a", "", "matched"),   // 2: ws /a
		httpEvent("response", "/x", "one", "200"), // 3: answers 0
		wsEvent("sent", "/a", "m", "sent"),        // 4: ws /a
		httpEvent("response", "/x", "two", "200"), // 5: answers 1
		httpEvent("response", "/z", "", "200"),    // 6: no request: its own
		wsEvent("received", "/a", "", "closed"),   // 7: ws /a
		wsEvent("request", "/a", "", "matched"),   // 8: a later ws /a joins it
		obj{"protocol": "websocket", "direction": "sent", "method": nil, "path": nil, "data": "", "outcome": "sent"}, // 9: null path
	)
	var events []obs
	for i, e := range rec["protocol_events"].(arr) {
		events = append(events, obs{value: fixInts(e), index: i})
	}
	var got [][]int
	for _, c := range protocolConnections(events) {
		var ids []int
		for _, o := range c {
			ids = append(ids, o.index)
		}
		got = append(got, ids)
	}
	want := [][]int{{0, 3}, {1, 5}, {2, 4, 7, 8}, {6}, {9}}
	if fmtJSON(got) != fmtJSON(want) {
		t.Fatalf("connections %v, want %v", got, want)
	}
}
