package compare

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"testing"

	"github.com/gatehouse/gatehouse/backend/evidence"
)

// Capture-like records for tests, built as plain JSON values: obj is a
// JSON object, arr a JSON array.
type obj = map[string]any
type arr = []any

func testNormalization() obj {
	return obj{"paths": true, "pids": true, "ports": true, "time_bucket_ms": 10, "patterns": arr{}}
}

func testContract() obj {
	return obj{
		"approved": true, "working_directory": "/work", "environment_names": arr{},
		"terminal": obj{"columns": 80, "rows": 24, "scrollback": 1000}, "events": arr{},
		"checkpoints": arr{}, "command_shims": arr{}, "timeout_ms": 30000, "normalization": testNormalization(),
	}
}

func frame(seq, at int, data string) obj {
	return obj{"sequence": seq, "at_ms": at, "data": data}
}

func rendered(seq, at int, line string) obj {
	return obj{"sequence": seq, "at_ms": at, "columns": 80, "rows": 1, "cursor_x": len(line), "cursor_y": 0,
		"active_buffer": "normal", "lines": arr{line}, "serialized_state": line}
}

func interaction(seq, at int, data string) obj {
	return obj{"sequence": seq, "scheduled_at_ms": at, "dispatched_at_ms": at, "type": "input", "data": data, "outcome": "dispatched"}
}

func sample(at, pid int, command string) obj {
	return obj{"at_ms": at, "pid": pid, "parent_pid": 1, "command": command, "process_group_id": pid, "session_id": pid}
}

func checkpoint(name string, at int, files ...any) obj {
	return obj{"name": name, "at_ms": at, "files": append(arr{}, files...), "effects": arr{}, "truncated": false}
}

func fileState(path, sum string) obj {
	if len(sum) != 64 { // a short name for a content: its SHA-256, so that the record stays valid
		sum = fmt.Sprintf("%x", sha256.Sum256([]byte(sum)))
	}
	return obj{"path": path, "mode": 420, "size": 3, "type": "file", "sha256": sum, "symlink_target": nil}
}

func shimEvent(seq, at int, command string) obj {
	return obj{"sequence": seq, "at_ms": at, "command": command, "route_index": 0, "arguments": arr{"--version"},
		"working_directory": "<working-directory>", "outcome": "matched"}
}

func protocolEvent(seq, at int, path string) obj {
	return obj{"sequence": seq, "at_ms": at, "protocol": "http", "direction": "request", "method": "GET", "path": path,
		"data": "<redacted-request-body>", "outcome": "matched"}
}

func transition(seq, at int, id string) obj {
	return obj{"sequence": seq, "at_ms": at, "transition_id": id, "state_before": "s", "state_after": "s", "sensitive_aliases": arr{}}
}

// baseRecord is a small valid capture record: "hello" printed and rendered,
// one input, one process sample, the two mandatory checkpoints, exit 0.
func baseRecord() obj {
	r := obj{
		"schema_version": 4,
		"manifest": obj{
			"gatehouse_version": "0.1.0", "provider_version": "1", "platform": "linux", "architecture": "amd64",
			"pty_backend": "creack/pty", "started_at": "2026-01-01T00:00:00.000Z", "completed_at": "2026-01-01T00:00:01.000Z",
			"scenario":            obj{"approved": true, "executable": "/bin/sh", "arguments": arr{"-c", "echo hello"}},
			"comparison_contract": testContract(),
			"shim_plan":           arr{obj{"name": "codex", "routes": arr{obj{"arguments": arr{"--version"}, "max_calls": 2}}}},
			"replay_plan":         obj{"machine": nil, "http": arr{}, "websocket_messages": arr{}, "websocket_connections": arr{}},
			"executable_sha256":   "0000000000000000000000000000000000000000000000000000000000000000",
		},
		"normalization":          testNormalization(),
		"frames":                 arr{frame(0, 5, "hello")},
		"rendered_frames":        arr{rendered(0, 5, "hello")},
		"interaction_events":     arr{interaction(0, 20, "x\r")},
		"exit":                   obj{"code": 0, "signal": nil, "reason": "exited"},
		"settlement":             obj{"state": "quiesced", "elapsed_ms": 100, "cleanup_outcome": "not_required"},
		"process_samples":        arr{sample(0, 100, "sh")},
		"filesystem_checkpoints": arr{checkpoint("before", 0), checkpoint("after_settlement", 200)},
		"shim_events":            arr{},
		"protocol_events":        arr{},
		"replay_transitions":     arr{},
		"reactive_run":           nil,
		"event_journal":          arr{},
		"files_before":           arr{},
		"files_after":            arr{},
		"filesystem_effects":     arr{},
		"truncated":              false,
		"limitations":            arr{},
		"residual_unknowns":      arr{},
		"cleanup":                obj{"owned_process_group": "verified", "temporary_root": "removed"},
	}
	return r
}

// finish recomputes the manifest commitments and rebuilds the event
// journal: every observation in at_ms order (stable by collection), then
// exit and settlement.
func finish(r obj) obj {
	m := r["manifest"].(obj)
	for sha, val := range map[string]any{
		"full_scenario_sha256": m["scenario"], "comparison_contract_sha256": m["comparison_contract"],
		"shim_plan_sha256": m["shim_plan"], "replay_plan_sha256": m["replay_plan"], "normalization_sha256": r["normalization"],
	} {
		d, err := evidence.Digest(val)
		if err != nil {
			panic(err)
		}
		m[sha] = d
	}
	type entry struct {
		at    int
		coll  string
		index int
	}
	var entries []entry
	for _, name := range collections {
		items, _ := r[name].(arr)
		for i, it := range items {
			o := it.(obj)
			at, ok := o["at_ms"].(int)
			if !ok {
				at, _ = o["dispatched_at_ms"].(int)
			}
			entries = append(entries, entry{at, name, i})
		}
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].at < entries[j].at })
	j := arr{}
	for _, e := range entries {
		j = append(j, obj{"capture_order": len(j), "collection": e.coll, "index": e.index})
	}
	j = append(j, obj{"capture_order": len(j), "collection": "exit", "index": 0})
	j = append(j, obj{"capture_order": len(j), "collection": "settlement", "index": 0})
	r["event_journal"] = j
	return r
}

// committed is a protocol event that committed a machine transition.
func committed(e obj) obj {
	e["outcome"] = "committed"
	return e
}

// replayPlanFor is the smallest replay plan under which the record's
// protocol events and replay transitions could have been observed: a
// machine with each recorded transition (max_uses its count) when
// transitions or committed events are recorded, else static routes with
// max_calls the number of matched calls of each; nil when the record
// holds no replay observations.
func replayPlanFor(rs ...obj) obj {
	var events, trans arr
	for _, r := range rs {
		e, _ := r["protocol_events"].(arr)
		t, _ := r["replay_transitions"].(arr)
		events, trans = append(events, e...), append(trans, t...)
	}
	if len(events)+len(trans) == 0 {
		return nil
	}
	plan := obj{"machine": nil, "http": arr{}, "websocket_messages": arr{}, "websocket_connections": arr{}}
	machine := len(trans) > 0
	anyMatched := false
	for _, e := range events {
		machine = machine || e.(obj)["outcome"] == "committed"
		anyMatched = anyMatched || e.(obj)["outcome"] == "matched"
	}
	machine = machine || !anyMatched // no call matched a route: a machine that moved nowhere
	if machine {
		uses, order, ends := map[string]int{}, []string{}, map[string][2]any{}
		for _, t := range trans {
			o := t.(obj)
			id := o["transition_id"].(string)
			if uses[id] == 0 {
				order = append(order, id)
				ends[id] = [2]any{o["state_before"], o["state_after"]}
			}
			uses[id]++
		}
		ts := arr{}
		for _, id := range order {
			ts = append(ts, obj{"id": id, "from": ends[id][0], "to": ends[id][1], "max_uses": uses[id], "captures": arr{}})
		}
		initial := any("s")
		if len(trans) > 0 {
			initial = trans[0].(obj)["state_before"]
		}
		for _, r := range rs { // a second record's first transition starts where the first's did
			if t, _ := r["replay_transitions"].(arr); len(t) > 0 && t[0].(obj)["state_before"] != initial {
				panic("replayPlanFor: records whose machines start in different states")
			}
		}
		plan["machine"] = obj{"initial_state": initial, "transitions": ts, "max_transitions": max(len(trans), 1)}
		return plan
	}
	calls, keys := map[string]int{}, map[string][3]any{}
	var order []string
	for _, e := range events {
		o := e.(obj)
		if o["outcome"] != "matched" {
			continue
		}
		list := "http"
		switch {
		case o["protocol"] == "websocket" && o["direction"] == "request":
			list = "websocket_connections"
		case o["protocol"] == "websocket":
			list = "websocket_messages"
		}
		k := fmt.Sprint(list, o["method"], o["path"])
		if calls[k] == 0 {
			order = append(order, k)
			keys[k] = [3]any{list, o["method"], o["path"]}
		}
		calls[k]++
	}
	for _, k := range order {
		route := obj{"path": keys[k][2], "max_calls": calls[k]}
		if keys[k][0] == "http" {
			route["method"] = keys[k][1]
		}
		plan[keys[k][0].(string)] = append(plan[keys[k][0].(string)].(arr), route)
	}
	return plan
}

// shimPlanFor is the shim plan of the first record, with a route
// (max_calls the largest count of any record) for every command and
// of the shim events recorded that it lacks (a command it has keeps its
// routes and max_calls, so overuse stays overuse).
func shimPlanFor(rs ...obj) arr {
	plan := clone(obj{"p": rs[0]["manifest"].(obj)["shim_plan"]})["p"].(arr)
	need := map[string]int{}
	var order []string
	for _, r := range rs {
		counts := map[string]int{}
		events, _ := r["shim_events"].(arr)
		for _, e := range events {
			c := e.(obj)["command"].(string)
			counts[c]++
			if counts[c] > need[c] {
				if need[c] == 0 {
					order = append(order, c)
				}
				need[c] = counts[c]
			}
		}
	}
	for _, c := range order {
		found := false
		for _, s := range plan {
			found = found || s.(obj)["name"] == c // its routes and limits stay as given

		}
		if !found {
			plan = append(plan, obj{"name": c, "routes": arr{obj{"arguments": arr{"--version"}, "max_calls": need[c]}}})
		}
	}
	return plan
}

// envPair builds, finishes and seals two records under one contract: the
// replay and shim plans of each are made from the observations of both,
// as two runs of one scenario would have.
func envPair(t testing.TB, a, b obj) (*evidence.Envelope, *evidence.Envelope) {
	plan, shims := replayPlanFor(a, b), shimPlanFor(a, b)
	for _, r := range []obj{a, b} {
		if plan != nil {
			r["manifest"].(obj)["replay_plan"] = plan
		}
		r["manifest"].(obj)["shim_plan"] = clone(obj{"p": shims})["p"]
	}
	return seal(t, finishWith(a, false), nil), seal(t, finishWith(b, false), nil)
}

// finishValid is finish for a record that record.Verify must accept:
// before finishing, the manifest's scenario becomes the comparison
// contract with the record's shim plan, replay plan and normalization,
// plus the executable and arguments of the scenario given, so that every
// value committed beside the scenario is the scenario's own (the
// fixtures of the tests of Compare itself do not need this: Compare reads
// only what it compares).
func finishValid(r obj) obj { return finishWith(r, true) }

// finishWith is finishValid; derive says whether the record's replay and
// shim plans are first made from its own observations (envPair makes
// them from both sides).
func finishWith(r obj, derive bool) obj {
	m := r["manifest"].(obj)
	if derive {
		if plan := replayPlanFor(r); plan != nil {
			m["replay_plan"] = plan
		}
		m["shim_plan"] = shimPlanFor(r)
	}
	if cps, ok := r["filesystem_checkpoints"].(arr); ok && len(cps) > 0 {
		// The first and last checkpoints are files_before and files_after.
		if fb, ok := r["files_before"].(arr); ok {
			cps[0].(obj)["files"] = clone(obj{"f": fb})["f"]
		}
		if fa, ok := r["files_after"].(arr); ok {
			cps[len(cps)-1].(obj)["files"] = clone(obj{"f": fa})["f"]
		}
	}
	if c, ok := m["comparison_contract"].(obj); ok {
		given, _ := m["scenario"].(obj)
		c["command_shims"], c["normalization"] = m["shim_plan"], r["normalization"]
		if m["replay_plan"] != nil {
			c["replay"] = m["replay_plan"]
		}
		sc := obj{}
		for k, v := range c {
			if k != "environment_names" {
				sc[k] = v
			}
		}
		env := obj{}
		names, _ := c["environment_names"].(arr)
		for _, n := range names {
			env[n.(string)] = "x"
		}
		sc["environment"] = env
		for _, k := range []string{"executable", "arguments"} {
			if v, ok := given[k]; ok {
				sc[k] = v
			}
		}
		m["scenario"] = sc
	}
	return finish(r)
}

// seal wraps a record in sealed Process Capture Evidence, encoding it
// with marshal (json.Marshal when nil).
func seal(t testing.TB, r obj, marshal func(any) ([]byte, error)) *evidence.Envelope {
	t.Helper()
	if marshal == nil {
		marshal = json.Marshal
	}
	raw, err := marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	e := &evidence.Envelope{
		Provider:      evidence.Provider{ID: evidence.ProcessProviderID, Name: "Gatehouse process capture", Version: "1"},
		PredicateType: evidence.PredicateProcessCapture, Operation: evidence.OperationCaptureProcess,
		Parameters: json.RawMessage(`{}`), NormalizedResult: raw,
		Confidence: evidence.Observed, Authority: evidence.AuthorityControlledReplay,
	}
	if err := evidence.Seal(e); err != nil {
		t.Fatal(err)
	}
	return e
}

// env builds, finishes and seals a record.
func env(t testing.TB, r obj) *evidence.Envelope { return seal(t, finishValid(r), nil) }

// marshalReversed encodes v with every object's members in reverse
// sorted order, to show that member order does not matter.
func marshalReversed(v any) ([]byte, error) {
	var b bytes.Buffer
	var walk func(v any) error
	walk = func(v any) error {
		switch x := v.(type) {
		case obj:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Sort(sort.Reverse(sort.StringSlice(keys)))
			b.WriteByte('{')
			for i, k := range keys {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(strconv.Quote(k))
				b.WriteByte(':')
				if err := walk(x[k]); err != nil {
					return err
				}
			}
			b.WriteByte('}')
		case arr:
			b.WriteByte('[')
			for i, e := range x {
				if i > 0 {
					b.WriteByte(',')
				}
				if err := walk(e); err != nil {
					return err
				}
			}
			b.WriteByte(']')
		default:
			raw, err := json.Marshal(x)
			if err != nil {
				return err
			}
			b.Write(raw)
		}
		return nil
	}
	err := walk(v)
	return b.Bytes(), err
}

// clone deep-copies a record.
func clone(r obj) obj {
	raw, err := json.Marshal(r)
	if err != nil {
		panic(err)
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		panic(err)
	}
	return fixInts(v).(obj)
}

// fixInts turns json.Numbers back into ints so the fixture helpers can
// read at_ms.
func fixInts(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = fixInts(e)
		}
		return obj(x)
	case []any:
		for i, e := range x {
			x[i] = fixInts(e)
		}
		return arr(x)
	case json.Number:
		if i, err := strconv.Atoi(string(x)); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

// bigRecord is a capture with about n journaled events spread over every
// dimension, as a 10,000-event benchmark input.
func bigRecord(n int) obj {
	r := baseRecord()
	var frames, rend, inter, samples, shims, proto arr
	for i := range n {
		at := i
		switch i % 6 {
		case 0, 1:
			frames = append(frames, frame(len(frames), at, fmt.Sprintf("line %d of output\r\n", i)))
		case 2:
			rend = append(rend, rendered(len(rend), at, fmt.Sprintf("line %d of output", i)))
		case 3:
			inter = append(inter, interaction(len(inter), at, "y\r"))
		case 4:
			samples = append(samples, sample(at, 100+i%50, "node"))
		case 5:
			if i%12 == 5 {
				shims = append(shims, shimEvent(len(shims), at, "git"))
			} else {
				proto = append(proto, protocolEvent(len(proto), at, fmt.Sprintf("/api/%d", i)))
			}
		}
	}
	r["frames"], r["rendered_frames"], r["interaction_events"] = frames, rend, inter
	r["process_samples"], r["shim_events"], r["protocol_events"] = samples, shims, proto
	r["filesystem_checkpoints"] = arr{checkpoint("before", 0), checkpoint("after_settlement", n+100)}
	return r
}
