package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
)

// oracleInputs are the records TestVerifyMatchesOracle starts from: the
// pinned records of backend/capture, the FuzzVerifyRecord corpus, and
// records Verify accepts.
func oracleInputs(t testing.TB) [][]byte {
	t.Helper()
	var in [][]byte
	for _, p := range []string{"../testdata/record-pinned.json", "../testdata/record-pinned-escaped.json"} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, b)
	}
	corpus, _ := filepath.Glob("../testdata/fuzz/FuzzVerifyRecord/*")
	for _, p := range corpus {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := fuzzValue(b); ok {
			in = append(in, v)
		}
	}
	in = append(in, []byte(`{}`), []byte(`[]`), []byte(`null`), []byte(`{"a":1,"a":2}`),
		[]byte(`{"event_journal":[{"capture_order":0,"collection":"exit","index":0}],"exit":{"code":1,"reason":"timeout","signal":null}}`),
		benchRecord(t, 12, 8), benchRecord(t, 40, 30), replayRecordFor(t, false), replayRecordFor(t, true))
	// A frame spelled as encoding/json spells one up to a member after its
	// data, whose quotes the fast check of a frame must see (past a run of
	// plain bytes, and after an escaped backslash), with and without
	// escaped quotes before them.
	for _, extra := range []string{`","extra":"y"},{"sequence":1,`, `\\\\","extra":"y"},{"sequence":1,`} {
		for _, dataLen := range []int{4, 40} {
			r := benchRecord(t, 12, dataLen)
			in = append(in, bytes.Replace(r, []byte(`"},{"sequence":1,`), []byte(extra), 1))
		}
	}
	return in
}

// replayRecordFor is benchRecord with a static replay plan (or a machine)
// and protocol events and transitions against it (commitments left
// stale: the replay checks still run).
func replayRecordFor(t testing.TB, machine bool) []byte {
	var r map[string]any
	if err := json.Unmarshal(benchRecord(t, 6, 4), &r); err != nil {
		t.Fatal(err)
	}
	sc := r["manifest"].(map[string]any)["scenario"].(map[string]any)
	ev := func(seq int, proto, dir, method, path, data, outcome string) map[string]any {
		e := map[string]any{"sequence": seq, "at_ms": seq, "protocol": proto, "direction": dir, "method": nil, "path": nil, "data": data, "outcome": outcome}
		if method != "" {
			e["method"] = method
		}
		if path != "" {
			e["path"] = path
		}
		return e
	}
	if machine {
		sc["replay"] = map[string]any{"machine": map[string]any{"initial_state": "s0", "max_transitions": 2, "transitions": []any{
			map[string]any{"id": "t1", "from": "s0", "to": "s1", "max_uses": 1, "captures": []any{map[string]any{"variable": "tok", "sensitive": true}}}}}}
		r["protocol_events"] = []any{ev(0, "http", "request", "GET", "/a", RedactedRequestBody, "committed"), ev(1, "http", "response", "GET", "/a", "ok", "200"),
			ev(2, "http", "request", "GET", "/a", "", "committed")}
		r["replay_transitions"] = []any{map[string]any{"sequence": 0, "at_ms": 0, "transition_id": "t1", "state_before": "s0", "state_after": "s1", "sensitive_aliases": []any{"tok"}}}
	} else {
		sc["replay"] = map[string]any{"http": []any{map[string]any{"method": "GET", "path": "/a", "max_calls": 1}},
			"websocket_connections": []any{map[string]any{"path": "/ws", "max_calls": 1}}, "websocket_messages": []any{map[string]any{"path": "/ws", "max_calls": 2}}}
		r["protocol_events"] = []any{ev(0, "http", "request", "GET", "/a", "", "matched"), ev(1, "http", "response", "GET", "/a", "", "200"),
			ev(2, "websocket", "request", "GET", "/ws", "", "matched"), ev(3, "websocket", "received", "", "/ws", RedactedRequestBody, "matched"),
			ev(4, "websocket", "sent", "", "/ws", "hi", "sent"), ev(5, "http", "request", "GET", "/a", "body", "matched")}
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fuzzValue is the []byte of a "go test fuzz v1" corpus file.
func fuzzValue(b []byte) ([]byte, bool) {
	var s string
	_, err := fmt.Sscanf(string(b), "go test fuzz v1\n[]byte(%q)", &s)
	return []byte(s), err == nil
}

func sameIssues(t testing.TB, what string, raw []byte) {
	t.Helper()
	got, want := Verify(raw), oracleVerify(raw)
	if !slices.Equal(got, want) {
		t.Fatalf("%s: Verify and the oracle differ on\n%s\nVerify: %v\noracle: %v", what, raw, got, want)
	}
}

// TestVerifyMatchesOracle checks that Verify reports exactly the oracle's
// issues (codes, paths, messages, order) on real records and on random
// mutations of them, byte-level and structural.
func TestVerifyMatchesOracle(t *testing.T) {
	inputs := oracleInputs(t)
	rng := rand.New(rand.NewPCG(1, 2))
	rounds := 300
	if testing.Short() {
		rounds = 40
	}
	for k, raw := range inputs {
		sameIssues(t, fmt.Sprintf("input %d", k), raw)
		for r := range rounds {
			sameIssues(t, fmt.Sprintf("input %d, byte mutation %d", k, r), mutateBytes(rng, raw))
			if m, ok := mutateTree(rng, raw); ok {
				sameIssues(t, fmt.Sprintf("input %d, tree mutation %d", k, r), m)
			}
		}
	}
}

func mutateBytes(rng *rand.Rand, raw []byte) []byte {
	b := slices.Clone(raw)
	if len(b) == 0 {
		return b
	}
	for range 1 + rng.IntN(3) {
		i := rng.IntN(len(b))
		switch rng.IntN(4) {
		case 0:
			b[i] = "{}[]\",:0123456789-.eE\\tfnu \x00\x80"[rng.IntN(27)]
		case 1:
			j := min(len(b), i+rng.IntN(16))
			b = append(b[:i:i], b[j:]...)
		case 2:
			j := min(len(b), i+rng.IntN(32))
			b = slices.Insert(b, i, b[i:j]...)
		default:
			b = slices.Insert(b, i, []byte(`\u0000`)...)
		}
		if len(b) == 0 {
			break
		}
	}
	return b
}

// mutateTree decodes raw, changes one random value and encodes it again.
func mutateTree(rng *rand.Rand, raw []byte) ([]byte, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil, false
	}
	type node struct {
		get func() any
		set func(any)
	}
	var nodes []node
	var walk func(n node)
	walk = func(n node) {
		nodes = append(nodes, n)
		switch x := n.get().(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(node{func() any { return x[k] }, func(e any) { x[k] = e }})
			}
		case []any:
			for i := range x {
				walk(node{func() any { return x[i] }, func(e any) { x[i] = e }})
			}
		}
	}
	walk(node{func() any { return v }, func(e any) { v = e }})
	for range 1 + rng.IntN(2) {
		n := nodes[rng.IntN(len(nodes))]
		replacements := []any{nil, true, false, 0.0, -1.0, 1.5, 1e300, "", "x", "before", "after_settlement", "exited",
			"matched", "frames", "\u001b[0m", []any{}, []any{"a", 1.0}, map[string]any{}, map[string]any{"unknown": 1.0}}
		switch x := n.get().(type) {
		case map[string]any:
			if len(x) > 0 && rng.IntN(2) == 0 {
				for k := range x {
					delete(x, k)
					break
				}
			} else {
				x[[]string{"sequence", "at_ms", "extra", "name", "data"}[rng.IntN(5)]] = replacements[rng.IntN(len(replacements))]
			}
		case []any:
			if len(x) > 1 && rng.IntN(2) == 0 {
				i, j := rng.IntN(len(x)), rng.IntN(len(x))
				x[i], x[j] = x[j], x[i]
			} else {
				n.set(append(x, replacements[rng.IntN(len(replacements))]))
			}
		case float64:
			n.set(x + float64(rng.IntN(5)-2))
		default:
			n.set(replacements[rng.IntN(len(replacements))])
		}
	}
	b, err := json.Marshal(v)
	return b, err == nil
}

// FuzzVerifyMatchesOracle is TestVerifyMatchesOracle on fuzzed records.
func FuzzVerifyMatchesOracle(f *testing.F) {
	for _, in := range oracleInputs(f) {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, raw []byte) { sameIssues(t, "fuzzed record", raw) })
}
