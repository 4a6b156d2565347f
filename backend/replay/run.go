package replay

import (
	"fmt"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// Bounds of a direct run (`gatehouse run-replay-machine`, MCP
// run_replay_machine). They bound both the returned content and the
// secret-redaction work.
const (
	// MaxEvents is the most events one direct run offers.
	MaxEvents = 10_000
	// MaxActionJSONBytes bounds the compact JSON of every declared action
	// of the machine, summed.
	MaxActionJSONBytes = 4 << 20
	// MaxActionFields bounds the action text fields of the machine: the
	// body and each header of every http_response, and the data of every
	// websocket_send.
	MaxActionFields = 1024
	// MaxSensitiveCaptureOps bounds the sensitive captures the machine can
	// possibly perform: the sum over transitions of its sensitive captures
	// times min(max_uses, max_transitions).
	MaxSensitiveCaptureOps = 1024
	// MaxEventAtMS bounds an event's at_ms.
	MaxEventAtMS = 1_000_000_000
)

// Run is one validated direct run: a machine and the events to offer it.
type Run struct {
	Machine *Machine
	Events  []Event
}

// ParseRun strictly parses a direct run document {machine, events}: the
// machine as ParseMachineAt does (paths below "$.machine"), at most
// MaxEvents events (paths "$.events[i]"), and the direct-run bounds on the
// machine (MaxActionJSONBytes, MaxActionFields, MaxSensitiveCaptureOps).
//
// Events are {type: "http_request", method, path, headers ({}), body
// (null), connection?, at_ms?}, {type: "websocket_connect", connection,
// path, headers ({}), at_ms?} and {type: "websocket_message", connection,
// body, at_ms?}. at_ms defaults to the previous event's (0 for the first)
// and may not decrease; one connection id may not carry both HTTP and
// WebSocket events. Issues never repeat a header value or a body.
func ParseRun(data []byte) (*Run, []Issue) {
	if len(data) > MaxInputBytes {
		return nil, []Issue{{Code: CodeTooLarge, Path: "$", Message: fmt.Sprintf("the run is %d bytes; the limit is %d bytes", len(data), MaxInputBytes)}}
	}
	issues := &strictjson.Collector{}
	v := decodeJSON(data, "$", jsonOptions(MaxDepth, MaxValues), issues)
	if v == nil || !issues.Empty() {
		return nil, issues.List
	}
	c := newChecker(issues)
	top, _ := c.Object(v, "$", "machine", "events")
	if top == nil {
		return nil, issues.List
	}
	run := &Run{Events: []Event{}}
	if mv, ok := c.Required(top, "$", "machine"); ok {
		before := len(issues.List)
		run.Machine = c.machine(mv, "$.machine")
		if run.Machine != nil && len(issues.List) == before {
			c.directBounds(run.Machine, "$.machine")
		}
	}
	kinds := map[string]bool{} // connection id -> websocket
	last := 0
	c.List(top, "$", "events", true, 0, MaxEvents, func(i int, e *strictjson.Node, at string) bool {
		ev, ok := c.event(e, at, last)
		if !ok {
			return false
		}
		if ev.AtMS < last {
			c.Add(at+".at_ms", CodeNotSorted, "at_ms %d is earlier than the previous event's %d", ev.AtMS, last)
			return false
		}
		last = ev.AtMS
		if ev.Connection != "" {
			ws := ev.Type != EventHTTPRequest
			if prev, seen := kinds[ev.Connection]; seen && prev != ws {
				c.Add(at+".connection", CodeConnectionConflict, "connection %s carries both HTTP and WebSocket events", ev.Connection)
				return false
			}
			kinds[ev.Connection] = ws
		}
		run.Events = append(run.Events, ev)
		return true
	})
	if !issues.Empty() {
		return nil, issues.List
	}
	return run, nil
}

// Execute offers every event of run to a fresh runtime and returns the
// redacted result.
func Execute(run *Run) (Result, error) {
	rt, err := NewRuntime(run.Machine)
	if err != nil {
		return Result{}, err
	}
	for _, ev := range run.Events {
		rt.Dispatch(ev)
	}
	return rt.Result(), nil
}

// directBounds checks the direct-run bounds on a valid machine, naming the
// transition at which each running total first passes its bound.
func (c *checker) directBounds(m *Machine, path string) {
	bytes, fields, ops := 0, 0, 0
	bytesDone, fieldsDone, opsDone := false, false, false
	for i, t := range m.Transitions {
		at := fmt.Sprintf("%s.transitions[%d]", path, i)
		for _, a := range t.Actions {
			b, _ := a.MarshalJSON()
			bytes += len(b)
			fields += a.textFields()
		}
		sens := 0
		for _, cp := range t.Captures {
			if cp.Sensitive {
				sens++
			}
		}
		ops += sens * min(t.MaxUses, m.MaxTransitions)
		if bytes > MaxActionJSONBytes && !bytesDone {
			bytesDone = true
			c.Add(at+".actions", CodeActionBytesExceeded, "the actions up to here hold %d bytes of JSON; a direct run allows at most %d", bytes, MaxActionJSONBytes)
		}
		if fields > MaxActionFields && !fieldsDone {
			fieldsDone = true
			c.Add(at+".actions", CodeActionFieldsExceeded, "the actions up to here hold %d text fields; a direct run allows at most %d", fields, MaxActionFields)
		}
		if ops > MaxSensitiveCaptureOps && !opsDone {
			opsDone = true
			c.Add(at+".captures", CodeSensitiveCaptureExceeded, "the transitions up to here can perform %d sensitive captures (sensitive captures × min(max_uses, max_transitions)); a direct run allows at most %d", ops, MaxSensitiveCaptureOps)
		}
	}
}

// event reads one event; prevAt is the default at_ms.
func (c *checker) event(v *strictjson.Node, at string, prevAt int) (Event, bool) {
	var ev Event
	typ, ok := c.Variant(v, at, "type", EventHTTPRequest, EventWebSocketConnect, EventWebSocketMessage)
	if !ok {
		return ev, false
	}
	ev.Type = typ
	var allowed []string
	switch typ {
	case EventHTTPRequest:
		allowed = []string{"type", "connection", "method", "path", "headers", "body", "at_ms"}
	case EventWebSocketConnect:
		allowed = []string{"type", "connection", "path", "headers", "at_ms"}
	default:
		allowed = []string{"type", "connection", "body", "at_ms"}
	}
	m, good := c.Object(v, at, allowed...)
	quiet := func(key, what, pattern string, match func(string) bool) string {
		fv, has := c.Required(m, at, key)
		if !has {
			good = false
			return ""
		}
		s, ok := c.Str(fv, at+"."+key)
		if ok && !match(s) {
			// The value is not repeated: a path or id may carry a secret.
			c.Add(at+"."+key, CodeInvalidName, "not a valid %s (%s)", what, pattern)
			ok = false
		}
		good = good && ok
		return s
	}
	if cv, has := m["connection"]; has || typ != EventHTTPRequest {
		if !has {
			quiet("connection", "connection id", namePattern, isName)
		} else if s, ok := c.Str(cv, at+".connection"); !ok {
			good = false
		} else if !isName(s) {
			c.Add(at+".connection", CodeInvalidName, "not a valid connection id (%s)", namePattern)
			good = false
		} else {
			ev.Connection = s
		}
	}
	if typ == EventHTTPRequest {
		ev.Method = quiet("method", "HTTP method", methodPattern, isMethod)
	}
	if typ != EventWebSocketMessage {
		ev.Path = quiet("path", "path", pathPattern, isPath)
		var ok bool
		ev.Headers, ok = c.headers(m, at, "headers")
		good = good && ok
	}
	bodyAt := at + ".body"
	switch bv, has := m["body"]; {
	case typ == EventWebSocketMessage && !has:
		c.Add(bodyAt, CodeMissingField, "required field is missing")
		good = false
	case has && bv.Kind == strictjson.Null && typ == EventHTTPRequest:
	case has:
		s, ok := c.Str(bv, bodyAt)
		if ok && utf8.RuneCountInString(s) > MaxLimitBytes {
			c.Add(bodyAt, CodeInvalidLength, "the body is longer than %d characters", MaxLimitBytes)
			ok = false
		}
		if ok {
			ev.Body = &s
		}
		good = good && ok
	}
	ev.AtMS = prevAt
	if av, has := m["at_ms"]; has {
		n, ok := c.Integer(av, at+".at_ms", 0, MaxEventAtMS)
		ev.AtMS = n
		good = good && ok
	}
	return ev, good
}
