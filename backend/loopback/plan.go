package loopback

// The replay plan of a scenario (docs/formats/capture-scenario.md, "Replay"): either
// a replay machine (validated by backend/replay) or static scripts.
//
// The spec fixes the replay object's members but not the shape of a
// static script, so this file defines it, reusing the replay machine's
// vocabulary (exact method, path, headers and body triggers; credential
// headers may not be matched literally):
//
//	http:                  {method, path, headers ({}), body (null = any),
//	                        response ({status 200–599 (200), headers ({}), body ("")} | null),
//	                        delay_ms 0–300000 (0), disconnect (false), max_calls 1–100000 (1)}
//	websocket_connections: {path, headers ({}), messages: [{delay_ms, data}] ([]),
//	                        disconnect_after_ms 0–300000 | null (null), max_calls (1)}
//	websocket_messages:    {path, body (null = any), replies: [{delay_ms, data}] ([]),
//	                        disconnect (false), max_calls (1)}
//
// An http route answers the first request that matches it and has calls
// left: after delay_ms it sends its response, or (disconnect) closes the
// connection without one; response is null exactly when disconnect is
// true. A websocket_connections route accepts a WebSocket upgrade on its
// path, sends its messages at delay_ms after the connection opened and
// closes it at disconnect_after_ms (not before the last message). A
// websocket_messages route answers a text message received on a
// connection opened on its path: replies at delay_ms after the message,
// then a close when disconnect. Delays of one list are non-decreasing.
// Absent members take their defaults, and the scenario keeps each script
// in that defaulted form, so equal scripts hash equally.

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
	"github.com/gatehouse/gatehouse/backend/replay"
)

// Bounds of the static replay scripts.
const (
	MaxReplayRoutes   = 1000   // entries of each of http, websocket_messages, websocket_connections
	MaxReplayMessages = 1000   // messages or replies of one WebSocket route
	MaxReplayCalls    = 100000 // max_calls
	MaxReplayDelayMS  = 300000 // delay_ms and disconnect_after_ms; the scenario's timeout_ms bound
)

// Issue codes Check and ParsePlan report besides strictjson's. They are the
// scenario's codes of the same name (and the replay machine's where it has
// one).
const (
	CodeConflict         = "conflict"                  // a machine with static scripts, a response with a disconnect
	CodeInvalidName      = replay.CodeInvalidName      // a method, path or header name not matching its pattern
	CodeDuplicateEntry   = replay.CodeDuplicateEntry   // a header twice (names are case-insensitive)
	CodeNotSorted        = replay.CodeNotSorted        // a delay earlier than the one before it
	CodeCredentialHeader = replay.CodeCredentialHeader // a route that matches a credential header literally
)

// strictjson's codes the plan checks report.
const (
	codeWrongType      = strictjson.CodeWrongType
	codeOutOfRange     = strictjson.CodeOutOfRange
	codeTooManyEntries = strictjson.CodeTooManyEntries
	codeInvalidValue   = strictjson.CodeInvalidValue
)

// Replay is the replay object of a scenario in the form Check returns it:
// each member as compact JSON, every static script in its defaulted form
// (so equal scripts hash equally) and the machine as backend/replay
// defaulted it, or JSON null.
type Replay struct {
	Machine              json.RawMessage   `json:"machine"` // an object, or JSON null
	HTTP                 []json.RawMessage `json:"http"`
	WebsocketMessages    []json.RawMessage `json:"websocket_messages"`
	WebsocketConnections []json.RawMessage `json:"websocket_connections"`
}

// httpRoute is one static http script.
type httpRoute struct {
	Method     string            `json:"method"`
	Path       string            `json:"path"`
	Headers    map[string]string `json:"headers"`
	Body       *string           `json:"body"`
	Response   *routeResponse    `json:"response"`
	DelayMS    int               `json:"delay_ms"`
	Disconnect bool              `json:"disconnect"`
	MaxCalls   int               `json:"max_calls"`
}

type routeResponse struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
}

// timedMessage is one text message sent delay_ms after its origin.
type timedMessage struct {
	DelayMS int    `json:"delay_ms"`
	Data    string `json:"data"`
}

// wsConnectionRoute is one static websocket_connections script.
type wsConnectionRoute struct {
	Path              string            `json:"path"`
	Headers           map[string]string `json:"headers"`
	Messages          []timedMessage    `json:"messages"`
	DisconnectAfterMS *int              `json:"disconnect_after_ms"`
	MaxCalls          int               `json:"max_calls"`
}

// wsMessageRoute is one static websocket_messages script.
type wsMessageRoute struct {
	Path       string         `json:"path"`
	Body       *string        `json:"body"`
	Replies    []timedMessage `json:"replies"`
	Disconnect bool           `json:"disconnect"`
	MaxCalls   int            `json:"max_calls"`
}

// Plan is the parsed replay object of a scenario: a machine or static
// scripts, ready to serve.
type Plan struct {
	machine *replay.Machine
	http    []httpRoute
	conns   []wsConnectionRoute
	msgs    []wsMessageRoute
}

// Empty reports a plan with nothing to serve (a nil plan too).
func (p *Plan) Empty() bool {
	return p == nil || p.machine == nil && len(p.http)+len(p.conns)+len(p.msgs) == 0
}

// checker validates a replay object, reporting every violation with its
// path.
type checker struct{ *strictjson.Checker }

// object checks that n is an object whose member names are all in allowed
// and returns its members; unknown members are reported but do not make
// the object unacceptable.
func (c checker) object(n *strictjson.Node, path string, allowed ...string) (strictjson.Members, bool) {
	m, _ := c.Object(n, path, allowed...)
	return m, m != nil
}

// boolField reads optional boolean member key of m, defaulting to def.
func (c checker) boolField(m strictjson.Members, path, key string, def bool) bool {
	b, _ := c.BoolField(m, path, key, def)
	return b
}

// listField reads optional array member key of m (default empty), calling
// each for every element with its path.
func (c checker) listField(m strictjson.Members, path, key string, min, max int, each func(i int, e *strictjson.Node, at string)) {
	c.List(m, path, key, false, min, max, func(i int, e *strictjson.Node, at string) bool {
		each(i, e, at)
		return true
	})
}

// Check reads the optional member "replay" of the scenario object m,
// reporting its issues at $.replay… through sc: its shape, the rule that
// a machine excludes static scripts, the machine (through backend/replay)
// and each static script against the schema above. Absent, it is a Replay
// with nothing to serve.
func Check(sc *strictjson.Checker, m strictjson.Members) Replay {
	c := checker{sc}
	r := Replay{Machine: json.RawMessage("null"), HTTP: []json.RawMessage{},
		WebsocketMessages: []json.RawMessage{}, WebsocketConnections: []json.RawMessage{}}
	v, ok := m["replay"]
	if !ok {
		return r
	}
	rm, ok := c.object(v, "$.replay", "machine", "http", "websocket_messages", "websocket_connections")
	if !ok {
		return r
	}
	r.Machine = c.opaqueOrNull(rm, "$.replay", "machine")
	lists := []struct {
		key string
		dst *[]json.RawMessage
	}{{"http", &r.HTTP}, {"websocket_messages", &r.WebsocketMessages}, {"websocket_connections", &r.WebsocketConnections}}
	var static []string
	for _, l := range lists {
		c.listField(rm, "$.replay", l.key, 0, math.MaxInt, func(_ int, e *strictjson.Node, at string) {
			if e.Kind != strictjson.Object {
				c.Add(at, codeWrongType, "must be an object, not %s", e.Kind)
				return
			}
			*l.dst = append(*l.dst, e.Raw())
		})
		if len(*l.dst) > 0 {
			static = append(static, l.key)
		}
	}
	if string(r.Machine) != "null" && len(static) > 0 {
		c.Add("$.replay.machine", CodeConflict, "a replay machine cannot be combined with static scripts (%s)", strings.Join(static, ", "))
	}
	c.replayContent(rm, &r)
	return r
}

// opaqueOrNull reads optional member key as an object or null (default
// null), kept as compact JSON for another package to validate.
func (c checker) opaqueOrNull(m strictjson.Members, path, key string) json.RawMessage {
	v, ok := m[key]
	if !ok || v.Kind == strictjson.Null {
		return json.RawMessage("null")
	}
	if v.Kind != strictjson.Object {
		c.Add(path+"."+key, codeWrongType, "must be an object or null, not %s", v.Kind)
		return json.RawMessage("null")
	}
	return v.Raw()
}

// replayContent validates the content of the replay object rm (whose
// shape replay has checked): the machine through backend/replay, each
// static script against the schema above. Valid scripts replace their
// raw JSON in r by their defaulted form.
func (c checker) replayContent(rm strictjson.Members, r *Replay) {
	if string(r.Machine) != "null" {
		m, issues := replay.ParseMachineAt(r.Machine, "$.replay.machine")
		for _, is := range issues {
			c.Add(is.Path, is.Code, "%s", is.Message)
		}
		if m != nil {
			c.machineServable(m)
			if b, err := marshalCompact(m); err == nil {
				r.Machine = b
			}
		}
	}
	lists := []struct {
		key   string
		dst   []json.RawMessage
		parse func(*strictjson.Node, string) (any, bool)
	}{
		{"http", r.HTTP, func(n *strictjson.Node, at string) (any, bool) { return c.httpRoute(n, at) }},
		{"websocket_connections", r.WebsocketConnections, func(n *strictjson.Node, at string) (any, bool) { return c.wsConnectionRoute(n, at) }},
		{"websocket_messages", r.WebsocketMessages, func(n *strictjson.Node, at string) (any, bool) { return c.wsMessageRoute(n, at) }},
	}
	for _, l := range lists {
		v, ok := rm[l.key]
		if !ok || v.Kind != strictjson.Array || len(v.Elems) > MaxReplayRoutes {
			if ok && v.Kind == strictjson.Array {
				c.Add("$.replay."+l.key, codeTooManyEntries, "has %d entries; at most %d are allowed", len(v.Elems), MaxReplayRoutes)
			}
			continue
		}
		k := 0 // index into dst, which holds the object elements only
		for i, e := range v.Elems {
			if e.Kind != strictjson.Object {
				continue // reported by replay
			}
			route, ok := l.parse(e, fmt.Sprintf("$.replay.%s[%d]", l.key, i))
			if ok {
				if b, err := marshalCompact(route); err == nil {
					l.dst[k] = b
				}
			}
			k++
		}
	}
}

// machineServable reports what a valid machine asks that a live HTTP
// server cannot do: a 1xx final status, or response headers that belong
// to the transport.
func (c checker) machineServable(m *replay.Machine) {
	for i, t := range m.Transitions {
		for k, a := range t.Actions {
			if a.Type != replay.ActionHTTPResponse {
				continue
			}
			at := fmt.Sprintf("$.replay.machine.transitions[%d].actions[%d]", i, k)
			if a.Status < 200 {
				c.Add(at+".status", codeOutOfRange, "a loopback server cannot send %d as a final response; 200–599 are allowed in a capture", a.Status)
			}
			for name := range a.Headers {
				if transportHeader(name) {
					c.Add(at+".headers"+strictjson.KeyPath(name), CodeInvalidName, "%q is set by the loopback server itself", name)
				}
			}
		}
	}
}

// transportHeader names response headers the server owns.
func transportHeader(lower string) bool {
	switch lower {
	case "content-length", "transfer-encoding", "connection", "upgrade", "trailer", "keep-alive":
		return true
	}
	return false
}

func marshalCompact(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	return json.RawMessage(b), err
}

// ParsePlan reads a replay object that Check accepted, decoding each
// script with opt (the options of the document it came from, so issues
// read alike); for a hand-built Replay it reports the issues Check would
// have reported for its content. The plan is nil exactly when there are
// issues.
func ParsePlan(r Replay, opt strictjson.Options) (*Plan, []strictjson.Issue) {
	var issues strictjson.Collector
	c := checker{&strictjson.Checker{Issues: &issues}}
	p := &Plan{}
	if len(r.Machine) > 0 && string(r.Machine) != "null" {
		m, is := replay.ParseMachineAt(r.Machine, "$.replay.machine")
		issues.List = append(issues.List, is...)
		if m != nil {
			c.machineServable(m)
			p.machine = m
		}
		if len(r.HTTP)+len(r.WebsocketConnections)+len(r.WebsocketMessages) > 0 {
			c.Add("$.replay.machine", CodeConflict, "a replay machine cannot be combined with static scripts")
		}
	}
	each := func(key string, raws []json.RawMessage, parse func(*strictjson.Node, string)) {
		for i, raw := range raws {
			at := fmt.Sprintf("$.replay.%s[%d]", key, i)
			n := strictjson.Decode(raw, "$", opt, &issues)
			if n == nil {
				continue
			}
			parse(n, at)
		}
	}
	each("http", r.HTTP, func(n *strictjson.Node, at string) {
		if rt, ok := c.httpRoute(n, at); ok {
			p.http = append(p.http, rt)
		}
	})
	each("websocket_connections", r.WebsocketConnections, func(n *strictjson.Node, at string) {
		if rt, ok := c.wsConnectionRoute(n, at); ok {
			p.conns = append(p.conns, rt)
		}
	})
	each("websocket_messages", r.WebsocketMessages, func(n *strictjson.Node, at string) {
		if rt, ok := c.wsMessageRoute(n, at); ok {
			p.msgs = append(p.msgs, rt)
		}
	})
	if len(issues.List) > 0 {
		return nil, issues.List
	}
	return p, nil
}

// httpRoute checks one http script.
func (c checker) httpRoute(n *strictjson.Node, at string) (httpRoute, bool) {
	before := len(c.Issues.List)
	m, ok := c.object(n, at, "method", "path", "headers", "body", "response", "delay_ms", "disconnect", "max_calls")
	if !ok {
		return httpRoute{}, false
	}
	r := httpRoute{Headers: map[string]string{}}
	if s, ok := c.ReqStr(m, at, "method"); ok && c.method(s, at+".method") {
		r.Method = s
	}
	r.Path, _ = c.requestPath(m, at)
	r.Headers = c.headerMap(m, at, "headers", true)
	r.Body = c.optionalBody(m, at, "body")
	r.DelayMS, _ = c.IntField(m, at, "delay_ms", 0, MaxReplayDelayMS, 0)
	r.Disconnect = c.boolField(m, at, "disconnect", false)
	r.MaxCalls, _ = c.IntField(m, at, "max_calls", 1, MaxReplayCalls, 1)
	resp, present := m["response"]
	switch {
	case !present && !r.Disconnect:
		r.Response = &routeResponse{Status: 200, Headers: map[string]string{}}
	case !present || resp.Kind == strictjson.Null:
		if !r.Disconnect {
			c.Add(at+".response", CodeConflict, "a route without a response must disconnect (\"disconnect\": true)")
		}
	case r.Disconnect:
		c.Add(at+".response", CodeConflict, "a route that disconnects sends no response; leave response out")
	default:
		rm, ok := c.object(resp, at+".response", "status", "headers", "body")
		if !ok {
			break
		}
		rr := &routeResponse{}
		rr.Status, _ = c.IntField(rm, at+".response", "status", 200, 599, 200)
		rr.Headers = c.headerMap(rm, at+".response", "headers", false)
		rr.Body = ""
		if b, ok := rm["body"]; ok {
			rr.Body, _ = c.Str(b, at+".response.body")
		}
		r.Response = rr
	}
	return r, len(c.Issues.List) == before
}

// wsConnectionRoute checks one websocket_connections script.
func (c checker) wsConnectionRoute(n *strictjson.Node, at string) (wsConnectionRoute, bool) {
	before := len(c.Issues.List)
	m, ok := c.object(n, at, "path", "headers", "messages", "disconnect_after_ms", "max_calls")
	if !ok {
		return wsConnectionRoute{}, false
	}
	r := wsConnectionRoute{}
	r.Path, _ = c.requestPath(m, at)
	r.Headers = c.headerMap(m, at, "headers", true)
	r.Messages = c.timedMessages(m, at, "messages")
	r.MaxCalls, _ = c.IntField(m, at, "max_calls", 1, MaxReplayCalls, 1)
	if v, ok := m["disconnect_after_ms"]; ok && v.Kind != strictjson.Null {
		if d, ok := c.Integer(v, at+".disconnect_after_ms", 0, MaxReplayDelayMS); ok {
			if k := len(r.Messages); k > 0 && d < r.Messages[k-1].DelayMS {
				c.Add(at+".disconnect_after_ms", CodeNotSorted, "%d is before the last message (delay_ms %d)", d, r.Messages[k-1].DelayMS)
			}
			r.DisconnectAfterMS = &d
		}
	}
	return r, len(c.Issues.List) == before
}

// wsMessageRoute checks one websocket_messages script.
func (c checker) wsMessageRoute(n *strictjson.Node, at string) (wsMessageRoute, bool) {
	before := len(c.Issues.List)
	m, ok := c.object(n, at, "path", "body", "replies", "disconnect", "max_calls")
	if !ok {
		return wsMessageRoute{}, false
	}
	r := wsMessageRoute{}
	r.Path, _ = c.requestPath(m, at)
	r.Body = c.optionalBody(m, at, "body")
	r.Replies = c.timedMessages(m, at, "replies")
	r.Disconnect = c.boolField(m, at, "disconnect", false)
	r.MaxCalls, _ = c.IntField(m, at, "max_calls", 1, MaxReplayCalls, 1)
	return r, len(c.Issues.List) == before
}

// timedMessages reads a list of {delay_ms, data} with non-decreasing delays.
func (c checker) timedMessages(m strictjson.Members, path, key string) []timedMessage {
	out := []timedMessage{}
	last := 0
	c.listField(m, path, key, 0, MaxReplayMessages, func(_ int, e *strictjson.Node, at string) {
		em, ok := c.object(e, at, "delay_ms", "data")
		if !ok {
			return
		}
		var tm timedMessage
		d, okD := c.ReqInt(em, at, "delay_ms", 0, MaxReplayDelayMS)
		if okD && d < last {
			c.Add(at+".delay_ms", CodeNotSorted, "%d is before the previous entry's %d", d, last)
		}
		if okD {
			tm.DelayMS, last = d, max(last, d)
		}
		tm.Data, _ = c.ReqStr(em, at, "data")
		out = append(out, tm)
	})
	return out
}

// method checks ^[A-Z][A-Z_-]{0,31}$ (the replay machine's pattern).
func (c checker) method(s, path string) bool {
	ok := s != "" && len(s) <= 32 && s[0] >= 'A' && s[0] <= 'Z'
	for i := 1; ok && i < len(s); i++ {
		ok = s[i] >= 'A' && s[i] <= 'Z' || s[i] == '_' || s[i] == '-'
	}
	if !ok {
		c.Add(path, CodeInvalidName, "%q is not an HTTP method (^[A-Z][A-Z_-]{0,31}$)", strictjson.Truncate(s, 64))
	}
	return ok
}

// requestPath reads required member path: "/" then visible ASCII, at most
// 2048 bytes, matched exactly against the request target (path and query).
func (c checker) requestPath(m strictjson.Members, at string) (string, bool) {
	s, ok := c.ReqStr(m, at, "path")
	if !ok {
		return "", false
	}
	good := s != "" && s[0] == '/' && len(s) <= replay.MaxPathChars
	for i := 0; good && i < len(s); i++ {
		good = s[i] > ' ' && s[i] < 0x7f
	}
	if !good {
		c.Add(at+".path", CodeInvalidName, "%q is not a request path (\"/\" then visible ASCII, at most %d bytes)", strictjson.Truncate(s, 64), replay.MaxPathChars)
	}
	return s, good
}

// optionalBody reads member key as a string or null (default null).
func (c checker) optionalBody(m strictjson.Members, at, key string) *string {
	v, ok := m[key]
	if !ok || v.Kind == strictjson.Null {
		return nil
	}
	s, ok := c.Str(v, at+"."+key)
	if !ok {
		return nil
	}
	return &s
}

// headerMap reads optional header object key: at most replay.MaxHeaders
// RFC 9110 token names, unique without regard to case (returned lower
// case), values without CR, LF or NUL. A request matcher (request) may not
// name a credential header; a response may not set a transport header.
func (c checker) headerMap(m strictjson.Members, path, key string, request bool) map[string]string {
	out := map[string]string{}
	v, ok := m[key]
	if !ok {
		return out
	}
	at := path + "." + key
	if v.Kind != strictjson.Object {
		c.Add(at, codeWrongType, "must be an object of header names to values, not %s", v.Kind)
		return out
	}
	if len(v.Keys) > replay.MaxHeaders {
		c.Add(at, codeTooManyEntries, "has %d headers; at most %d are allowed", len(v.Keys), replay.MaxHeaders)
		return out
	}
	for i, k := range v.Keys {
		kp := at + strictjson.KeyPath(k)
		lk := strings.ToLower(k)
		switch {
		case !isHeaderToken(k) || len(k) > replay.MaxHeaderNameChars:
			c.Add(kp, CodeInvalidName, "%q is not a valid header name (1–128 RFC 9110 token characters)", strictjson.Truncate(k, 64))
			continue
		case request && replay.IsCredentialHeader(k):
			c.Add(kp, CodeCredentialHeader, "the credential header %q cannot be matched literally", lk)
			continue
		case !request && transportHeader(lk):
			c.Add(kp, CodeInvalidName, "%q is set by the loopback server itself", lk)
			continue
		}
		if _, dup := out[lk]; dup {
			c.Add(kp, CodeDuplicateEntry, "header %q appears more than once (names are case-insensitive)", lk)
			continue
		}
		s, ok := c.Str(v.Vals[i], kp)
		if !ok {
			continue
		}
		if strings.ContainsAny(s, "\r\n\x00") || len(s) > replay.MaxHeaderValueChars {
			c.Add(kp, codeInvalidValue, "a header value has at most %d bytes and no CR, LF or NUL", replay.MaxHeaderValueChars)
			continue
		}
		out[lk] = s
	}
	return out
}

// isHeaderToken reports whether s is a non-empty RFC 9110 token.
func isHeaderToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !strictjson.IsAlnum(s[i]) && strings.IndexByte("!#$%&'*+-.^_`|~", s[i]) < 0 {
			return false
		}
	}
	return true
}
