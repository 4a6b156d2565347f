package compare

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
)

// wsEvent and httpEvent are loopback protocol events as the capture
// records them (backend/loopback).
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
	left, right := envPair(t, withProtocol(seq(openA, openB, []obj{askX}, talkA, talkB, []obj{answerX})...),
		withProtocol(seq(openA, openB, []obj{askX, answerX}, talkB, talkA)...))
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
			left, right := envPair(t, withProtocol(seq(openA, openB, []obj{askX}, talkA, talkB, []obj{answerX})...), withProtocol(tc.right...))
			res := mustCompare(t, left, right, Options{DiffLimit: 50})
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

// BenchmarkBehaviorProtocol builds the behavior protocol dimension of two
// records of n protocol events (HTTP exchanges and messages on eight
// WebSocket paths, interleaved differently on the two sides): linear in n.
func BenchmarkBehaviorProtocol(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			side := func(shift int) *record {
				list := make([]any, n)
				for i := range n {
					j := (i + shift) % n
					var e obj
					switch j % 4 {
					case 0:
						e = httpEvent("request", fmt.Sprintf("/api/%d", j/4), "", "matched")
					case 1:
						e = httpEvent("response", fmt.Sprintf("/api/%d", j/4), "ok", "200")
					default:
						e = wsEvent("sent", fmt.Sprintf("/ws/%d", j%8), "m", "sent")
					}
					e["sequence"], e["at_ms"] = i, i
					list[i] = map[string]any(e)
				}
				return &record{lists: map[string][]any{"protocol_events": list}}
			}
			l, r := side(0), side(4)
			b.ResetTimer()
			defer reportCPU(b)()
			for b.Loop() {
				if d := behaviorProtocol(l, r); d.n[0] != n {
					b.Fatal(d.n)
				}
			}
		})
	}
}

// randomConnections is n connections as the loopback server records them:
// HTTP exchanges (some on one route, answered in order) and WebSocket
// connections on distinct paths with a few messages each.
func randomConnections(rng *rand.Rand, n int) [][]obj {
	conns := make([][]obj, n)
	for i := range conns {
		if rng.Intn(2) == 0 {
			p := fmt.Sprintf("/r%d", rng.Intn(3)) // exchanges may share a route
			conns[i] = []obj{httpEvent("request", p, "", "matched"), httpEvent("response", p, fmt.Sprintf("body %d", i), "200")}
			continue
		}
		p := fmt.Sprintf("/ws%d", i)
		c := []obj{wsEvent("request", p, "", "matched"), wsEvent("response", p, "", "101")}
		for k := range rng.Intn(4) {
			c = append(c, wsEvent("sent", p, fmt.Sprintf("m%d", k), "sent"))
		}
		conns[i] = c
	}
	return conns
}

// interleave merges the connections at random, keeping each one's order
// and the order of their first events; two exchanges on one route keep
// their answers in order (HTTP answers a route's requests first come,
// first served here), so a later one's response never precedes an
// earlier one's.
func interleave(rng *rand.Rand, conns [][]obj) []obj {
	next := make([]int, len(conns))
	var out []obj
	opened := 0
	for {
		var ready []int
		for i := range opened {
			if next[i] < len(conns[i]) && !blocked(conns, next, i) {
				ready = append(ready, i)
			}
		}
		if opened < len(conns) {
			ready = append(ready, opened)
		}
		if len(ready) == 0 {
			return out
		}
		i := ready[rng.Intn(len(ready))]
		if i == opened {
			opened++
		}
		out = append(out, conns[i][next[i]])
		next[i]++
	}
}

// blocked: connection i's next event is an HTTP response while an earlier
// exchange on its route is still unanswered.
func blocked(conns [][]obj, next []int, i int) bool {
	e := conns[i][next[i]]
	if e["protocol"] != "http" || e["direction"] != "response" {
		return false
	}
	for j := range i {
		if conns[j][0]["protocol"] == "http" && conns[j][0]["path"] == e["path"] && next[j] < 2 {
			return true
		}
	}
	return false
}

// TestPropertyProtocolInterleavingIsNoBehavior: any two interleavings of
// the same connections compare unchanged in behavior mode; one changed
// field anywhere is a protocol change whose first divergence is that
// event on both sides.
func TestPropertyProtocolInterleavingIsNoBehavior(t *testing.T) {
	rng := rand.New(rand.NewSource(17))
	for trial := range 200 {
		conns := randomConnections(rng, 1+rng.Intn(6))
		a, b := interleave(rng, conns), interleave(rng, conns)
		l, r := env(t, withProtocol(a...)), env(t, withProtocol(b...))
		if res := mustCompare(t, l, r, Options{}); res.Protocol != Unchanged {
			t.Fatalf("trial %d: protocol %s\n%s\n%s\n%s", trial, res.Protocol, fmtJSON(a), fmtJSON(b), fmtJSON(res.FirstDivergence))
		}
		// Change the data of one event of the right side.
		k := rng.Intn(len(b))
		b2 := slices.Clone(b)
		b2[k] = clone(b[k])
		b2[k]["data"] = "changed"
		if d := b2[k]["direction"]; d == "request" || d == "received" {
			// a request body or client message is recorded only as the placeholder or empty
			b2[k]["data"] = map[bool]string{true: "", false: "<redacted-request-body>"}[b[k]["data"] != ""]
		}
		l2, r2 := envPair(t, withProtocol(a...), withProtocol(b2...))
		res := mustCompare(t, l2, r2, Options{})
		want := fmt.Sprintf("$.normalized_result.protocol_events[%d]", k)
		if res.Protocol != Changed || res.FirstDivergence.Dimension != "protocol" || res.FirstDivergence.RightLocation != want {
			t.Fatalf("trial %d: changed event %d: protocol %s, first divergence %s", trial, k, res.Protocol, fmtJSON(res.FirstDivergence))
		}
	}
}
