package replay

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

const (
	namePattern     = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
	variablePattern = "^[A-Za-z_][A-Za-z0-9_]{0,63}$"
	methodPattern   = "^[A-Z][A-Z_-]{0,31}$"
	pathPattern     = `"/" then visible ASCII, at most 2048 bytes`
	maxStepChars    = 1024
)

// ParseMachine strictly parses one replay machine document (the machine
// object itself). See ParseMachineAt.
func ParseMachine(data []byte) (*Machine, []Issue) { return ParseMachineAt(data, "$") }

// ParseMachineAt strictly parses one replay machine document whose issues
// are reported below root (for example "$.replay.machine" for a machine
// embedded in a scenario).
//
// The input must be at most MaxInputBytes of valid UTF-8 holding exactly
// one JSON object, nested at most MaxDepth deep, with no duplicate member
// names. Unknown members are rejected at every level. Members with a
// default in the spec take it when absent (terminal false, max_visits
// 100000, priority 100, the limits, empty headers, guards, captures and
// actions, a null trigger body, an empty response body, sensitive false);
// every other member is required. Every rule of the spec is checked (see
// the Code* constants) and nothing is repaired: the result is either a
// machine and no issues, or nil and every issue found (at most MaxIssues).
// It never panics.
func ParseMachineAt(data []byte, root string) (*Machine, []Issue) {
	if len(data) > MaxInputBytes {
		return nil, []Issue{{Code: CodeTooLarge, Path: root, Message: fmt.Sprintf("the machine is %d bytes; the limit is %d bytes", len(data), MaxInputBytes)}}
	}
	issues := &strictjson.Collector{}
	v := decodeJSON(data, root, jsonOptions(MaxDepth, MaxValues), issues)
	if v == nil || !issues.Empty() {
		return nil, issues.List
	}
	c := newChecker(issues)
	m := c.machine(v, root)
	if !issues.Empty() {
		return nil, issues.List
	}
	return m, nil
}

// machine checks a machine object, its elements and then the rules that
// span the whole graph.
func (c *checker) machine(v *strictjson.Node, path string) *Machine {
	mm, _ := c.Object(v, path, "initial_state", "states", "transitions", "max_transitions", "limits")
	if mm == nil {
		return nil
	}
	m := &Machine{States: []State{}, Transitions: []Transition{}}
	var initOK bool
	m.InitialState, initOK = member(c, mm, path, "initial_state", c.named("state name", namePattern, isName))
	statesOK := list(c, mm, path, "states", true, 1, MaxStateCount, &m.States, c.state)
	transOK := list(c, mm, path, "transitions", true, 0, MaxTransitionCount, &m.Transitions, c.transition)
	m.MaxTransitions, _ = c.ReqInt(mm, path, "max_transitions", 1, MaxCount)
	m.Limits = c.limits(mm, path)
	if initOK && statesOK && transOK {
		c.graph(m, path)
	}
	m.validated = true
	return m
}

func (c *checker) state(v *strictjson.Node, at string) (State, bool) {
	m, ok := c.Object(v, at, "name", "terminal", "max_visits")
	if m == nil {
		return State{}, false
	}
	var s State
	var nameOK, termOK, visitsOK bool
	s.Name, nameOK = member(c, m, at, "name", c.named("state name", namePattern, isName))
	s.Terminal, termOK = c.BoolField(m, at, "terminal", false)
	s.MaxVisits, visitsOK = c.IntField(m, at, "max_visits", 1, MaxCount, DefaultMaxVisits)
	return s, ok && nameOK && termOK && visitsOK
}

func (c *checker) limits(mm strictjson.Members, path string) Limits {
	l := Limits{DefaultLimitConnections, DefaultLimitMessages, DefaultLimitBytes, DefaultLimitDurationMS}
	v, ok := mm["limits"]
	if !ok {
		return l
	}
	at := path + ".limits"
	m, _ := c.Object(v, at, "connections", "messages", "bytes", "duration_ms")
	if m == nil {
		return l
	}
	l.Connections, _ = c.IntField(m, at, "connections", 1, MaxLimitConnections, DefaultLimitConnections)
	l.Messages, _ = c.IntField(m, at, "messages", 1, MaxLimitMessages, DefaultLimitMessages)
	l.Bytes, _ = c.IntField(m, at, "bytes", 1, MaxLimitBytes, DefaultLimitBytes)
	l.DurationMS, _ = c.IntField(m, at, "duration_ms", 1, MaxLimitDurationMS, DefaultLimitDurationMS)
	return l
}

func (c *checker) transition(v *strictjson.Node, at string) (Transition, bool) {
	t := Transition{Guards: []Guard{}, Captures: []Capture{}, Actions: []Action{}}
	m, ok := c.Object(v, at, "id", "from", "to", "priority", "trigger", "guards", "captures", "actions", "max_uses")
	if m == nil {
		return t, false
	}
	nameField := func(key, what string) (string, bool) {
		return member(c, m, at, key, c.named(what, namePattern, isName))
	}
	var idOK, fromOK, toOK, prioOK, trigOK, usesOK bool
	t.ID, idOK = nameField("id", "transition id")
	t.From, fromOK = nameField("from", "state name")
	t.To, toOK = nameField("to", "state name")
	t.Priority, prioOK = c.IntField(m, at, "priority", 0, MaxCount, DefaultPriority)
	t.Trigger, trigOK = member(c, m, at, "trigger", c.trigger)
	guardsOK := list(c, m, at, "guards", false, 0, MaxGuards, &t.Guards, c.guard)
	capsOK := list(c, m, at, "captures", false, 0, MaxCaptures, &t.Captures, c.capture)
	actsOK := list(c, m, at, "actions", false, 0, MaxActions, &t.Actions, c.action)
	t.MaxUses, usesOK = c.ReqInt(m, at, "max_uses", 1, MaxCount)
	if trigOK && guardsOK && capsOK && actsOK {
		c.transitionRules(&t, at)
	}
	return t, ok && idOK && fromOK && toOK && prioOK && trigOK && guardsOK && capsOK && actsOK && usesOK
}

// trigger reads a trigger; its protocol decides which members it has.
func (c *checker) trigger(v *strictjson.Node, at string) (Trigger, bool) {
	var t Trigger
	proto, ok := c.Variant(v, at, "protocol", ProtocolHTTP, ProtocolWebSocketConnect, ProtocolWebSocketMessage)
	if !ok {
		return t, false
	}
	var allowed []string
	switch proto {
	case ProtocolHTTP:
		allowed = []string{"protocol", "method", "path", "headers", "body"}
	case ProtocolWebSocketConnect:
		allowed = []string{"protocol", "path", "headers"}
	case ProtocolWebSocketMessage:
		allowed = []string{"protocol", "path", "body"}
	}
	t.Protocol = proto
	m, good := c.Object(v, at, allowed...)
	if t.Protocol == ProtocolHTTP {
		t.Method, ok = member(c, m, at, "method", c.named("HTTP method", methodPattern, isMethod))
		good = good && ok
	}
	t.Path, ok = member(c, m, at, "path", c.named("path", pathPattern, isPath))
	good = good && ok
	if t.Protocol != ProtocolWebSocketMessage {
		t.Headers, ok = c.headers(m, at, "headers")
		good = good && ok
		if hv, has := m["headers"]; has && hv.Kind == strictjson.Object {
			for _, k := range hv.Keys {
				if IsCredentialHeader(k) {
					c.Add(at+".headers"+keyPath(k), CodeCredentialHeader, "a trigger may not match the credential header %q; capture it through a sensitive alias and compare it with a guard", strictjson.Truncate(k, 64))
					good = false
				}
			}
		}
	}
	if t.Protocol != ProtocolWebSocketConnect {
		if bv, has := m["body"]; has && bv.Kind != strictjson.Null {
			s, ok := c.text(bv, at+".body", MaxLimitBytes)
			if ok {
				t.Body = &s
			}
			good = good && ok
		}
	}
	return t, good
}

func (c *checker) source(v *strictjson.Node, at string) (Source, bool) {
	var s Source
	kind, ok := c.Variant(v, at, "source", SourceRequestHeader, SourceRequestJSON, SourceWebSocketJSON, SourceActionJSON)
	if !ok {
		return s, false
	}
	s.Source = kind
	if kind == SourceRequestHeader {
		m, good := c.Object(v, at, "source", "name")
		nv, has := c.Required(m, at, "name")
		if !has {
			return s, false
		}
		name, ok := c.name(nv, at+".name", "header name", "RFC 9110 token, at most 128 characters", func(n string) bool {
			return isToken(n) && len(n) <= MaxHeaderNameChars
		})
		s.Name = strings.ToLower(name)
		return s, good && ok
	}
	m, good := c.Object(v, at, "source", "path")
	pv, has := c.Required(m, at, "path")
	if !has {
		return s, false
	}
	steps, ok := c.Array(pv, at+".path", 0, MaxPathSteps)
	if !ok {
		return s, false
	}
	s.Path = []PathStep{}
	for i, e := range steps {
		sat := at + ".path[" + strconv.Itoa(i) + "]"
		switch e.Kind {
		case strictjson.String:
			k, ok := c.text(e, sat, maxStepChars)
			good = good && ok
			s.Path = append(s.Path, PathStep{Key: k})
		case strictjson.Number:
			n, ok := c.Integer(e, sat, 0, math.MaxInt32)
			good = good && ok
			s.Path = append(s.Path, PathStep{Index: n, IsIndex: true})
		default:
			c.Add(sat, CodeWrongType, "a path step must be a member name (string) or an array index (integer), not %s", e.Kind)
			good = false
		}
	}
	return s, good
}

func (c *checker) guard(v *strictjson.Node, at string) (Guard, bool) {
	var g Guard
	m, good := c.Object(v, at, "variable", "value")
	if m == nil {
		return g, false
	}
	var ok bool
	g.Variable, g.Value, ok = c.binding(m, at)
	return g, good && ok
}

func (c *checker) capture(v *strictjson.Node, at string) (Capture, bool) {
	var cp Capture
	m, good := c.Object(v, at, "variable", "value", "sensitive")
	if m == nil {
		return cp, false
	}
	var bindOK, sensOK bool
	cp.Variable, cp.Value, bindOK = c.binding(m, at)
	cp.Sensitive, sensOK = c.BoolField(m, at, "sensitive", false)
	return cp, good && bindOK && sensOK
}

// binding reads the members a guard and a capture share: the variable and
// the source of its value, both required.
func (c *checker) binding(m strictjson.Members, at string) (string, Source, bool) {
	variable, varOK := member(c, m, at, "variable", c.named("variable name", variablePattern, isVariable))
	value, valueOK := member(c, m, at, "value", c.source)
	return variable, value, varOK && valueOK
}

func (c *checker) action(v *strictjson.Node, at string) (Action, bool) {
	var a Action
	kind, ok := c.Variant(v, at, "type", ActionHTTPResponse, ActionWebSocketSend, ActionDisconnect, ActionDelay)
	if !ok {
		return a, false
	}
	a.Type = kind
	switch kind {
	case ActionHTTPResponse:
		m, good := c.Object(v, at, "type", "status", "headers", "body")
		var sOK, hOK bool
		a.Status, sOK = c.ReqInt(m, at, "status", MinStatus, MaxStatus)
		a.Headers, hOK = c.headers(m, at, "headers")
		if bv, has := m["body"]; has {
			var bOK bool
			a.Body, bOK = c.text(bv, at+".body", MaxLimitBytes)
			good = good && bOK
		}
		return a, good && sOK && hOK
	case ActionWebSocketSend:
		m, good := c.Object(v, at, "type", "data")
		dv, has := c.Required(m, at, "data")
		if !has {
			return a, false
		}
		var dOK bool
		a.Data, dOK = c.text(dv, at+".data", MaxLimitBytes)
		return a, good && dOK
	case ActionDelay:
		m, good := c.Object(v, at, "type", "duration_ms")
		var dOK bool
		a.DurationMS, dOK = c.ReqInt(m, at, "duration_ms", 0, MaxLimitDurationMS)
		return a, good && dOK
	}
	_, good := c.Object(v, at, "type")
	return a, good
}

// transitionRules checks one well-formed transition on its own: its
// actions against its trigger, its sources against its trigger and
// actions, credential captures, and duplicate capture variables.
func (c *checker) transitionRules(t *Transition, at string) {
	proto := t.Trigger.Protocol
	responses := 0
	for k, a := range t.Actions {
		aat := fmt.Sprintf("%s.actions[%d]", at, k)
		switch {
		case a.Type == ActionHTTPResponse && proto == ProtocolHTTP:
			responses++
		case a.Type == ActionHTTPResponse:
			c.Add(aat+".type", CodeActionNotAllowed, "a %s trigger cannot answer with an http_response", proto)
		case (a.Type == ActionWebSocketSend || a.Type == ActionDisconnect) && proto == ProtocolHTTP:
			c.Add(aat+".type", CodeActionNotAllowed, "an http trigger cannot perform %s; it answers with exactly one http_response", a.Type)
		}
	}
	if proto == ProtocolHTTP && responses != 1 {
		c.Add(at+".actions", CodeHTTPResponseCount, "an http trigger needs exactly one http_response action; it has %d", responses)
	}
	if text, ok := payloadText(t.Actions); ok {
		if doc, ok := parseBody(text); ok {
			t.payload = doc
		}
	}
	check := func(s Source, sat string) {
		switch s.Source {
		case SourceRequestHeader:
			if proto == ProtocolWebSocketMessage {
				c.Add(sat+".source", CodeSourceNotAllowed, "a websocket_message event has no request headers")
			}
		case SourceRequestJSON:
			if proto != ProtocolHTTP {
				c.Add(sat+".source", CodeSourceNotAllowed, "request_json reads an HTTP request body; use websocket_json for WebSocket messages")
			}
		case SourceWebSocketJSON:
			if proto != ProtocolWebSocketMessage {
				c.Add(sat+".source", CodeSourceNotAllowed, "websocket_json reads a websocket_message body")
			}
		case SourceActionJSON:
			if _, ok := payloadText(t.Actions); !ok {
				c.Add(sat+".source", CodeSourceNotAllowed, "action_json reads the body of the transition's first http_response or websocket_send, and it has neither")
			} else if t.payload == nil {
				c.Add(sat+".source", CodeUnresolvedActionPath, "the action payload read by action_json is not a JSON document")
			} else if _, ok := follow(t.payload, s.Path); !ok {
				c.Add(sat+".path", CodeUnresolvedActionPath, "the action payload holds nothing at this path (only its own members are followed)")
			}
		}
	}
	for k, g := range t.Guards {
		check(g.Value, fmt.Sprintf("%s.guards[%d].value", at, k))
	}
	seen := map[string]int{}
	for k, cp := range t.Captures {
		cat := fmt.Sprintf("%s.captures[%d]", at, k)
		check(cp.Value, cat+".value")
		if first, dup := seen[cp.Variable]; dup {
			c.Add(cat+".variable", CodeDuplicateEntry, "variable %s is already captured by captures[%d] of this transition", cp.Variable, first)
		} else {
			seen[cp.Variable] = k
		}
		if cp.Value.Source == SourceRequestHeader && credentialHeaders[cp.Value.Name] && !cp.Sensitive {
			c.Add(cat+".sensitive", CodeCredentialNotSensitive, "the credential header %q may only be captured through a sensitive alias (\"sensitive\": true)", cp.Value.Name)
		}
		if cp.Sensitive && cp.Value.Source == SourceActionJSON && t.payload != nil {
			if v, ok := follow(t.payload, cp.Value.Path); ok && (v.Kind != strictjson.String || v.Str == "") {
				what := v.Kind.String()
				if v.Kind == strictjson.String {
					what = "an empty string"
				}
				c.Add(cat+".value.path", CodeSensitiveNotString, "a sensitive capture must hold a non-empty string, and the action payload holds %s here", what)
			}
		}
	}
}
