// Package replay implements the finite replay machine of
// docs/formats/replay-machine.md: the strict machine schema and
// every validation rule, a deterministic runtime that dispatches protocol
// events in the order the spec fixes, and the direct run behind
// `gatehouse run-replay-machine` (no process, no socket).
//
// Refusals are data: each offered event yields one Decision whose outcome
// is either committed or one of the refusal outcomes, and the run goes on.
// Sensitive captured values never leave the package unredacted: every
// string of a Result has each one replaced by "<secret:ALIAS>".
//
// JSON paths (sources and issue paths) follow a document's own members
// only. There is no prototype chain: "__proto__", "constructor" and
// "toString" are ordinary keys that exist only when a document holds them.
//
// The package keeps no mutable package-level state.
package replay

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// Bounds of the machine schema.
const (
	// MaxInputBytes is the largest document ParseMachine and ParseRun read
	// (larger input files are refused before parsing: docs/formats/README.md).
	MaxInputBytes = 64 << 20
	// MaxDepth is the deepest nesting of a machine or run document (the
	// root is depth 1).
	MaxDepth = 32
	// MaxValues is the most JSON values one machine or run document holds.
	MaxValues = 1_000_000
	// MaxBodyDepth and MaxBodyValues bound the JSON parse of one request
	// body, WebSocket message or action payload for a JSON source.
	MaxBodyDepth  = 64
	MaxBodyValues = 100_000

	MaxStateCount       = 1000 // states
	MaxTransitionCount  = 1000 // declared transitions
	MaxGuards           = 16   // per transition
	MaxCaptures         = 16   // per transition
	MaxActions          = 64   // per transition
	MaxHeaders          = 64   // per trigger, action or event
	MaxPathSteps        = 32   // per JSON source
	MaxNameChars        = 64   // state names, transition ids, variables, connection ids
	MaxHeaderNameChars  = 128
	MaxHeaderValueChars = 8192
	MaxPathChars        = 2048
	// MaxCount bounds priority, max_uses, max_transitions and max_visits.
	MaxCount = 1_000_000
	// MaxStatus and MinStatus bound an http_response status.
	MinStatus = 100
	MaxStatus = 599

	DefaultPriority  = 100
	DefaultMaxVisits = 100_000
)

// Bounds and defaults of the machine's limits object; the maxima are the
// scenario's own ceilings (docs/formats/capture-scenario.md).
const (
	DefaultLimitConnections = 100
	DefaultLimitMessages    = 10_000
	DefaultLimitBytes       = 1_000_000
	DefaultLimitDurationMS  = 30_000
	MaxLimitConnections     = 1000
	MaxLimitMessages        = 100_000
	MaxLimitBytes           = 10_000_000
	MaxLimitDurationMS      = 300_000
)

// Trigger protocols.
const (
	ProtocolHTTP             = "http"
	ProtocolWebSocketConnect = "websocket_connect"
	ProtocolWebSocketMessage = "websocket_message"
)

// Action types.
const (
	ActionHTTPResponse  = "http_response"
	ActionWebSocketSend = "websocket_send"
	ActionDisconnect    = "disconnect"
	ActionDelay         = "delay"
)

// Source kinds.
const (
	SourceRequestHeader = "request_header"
	SourceRequestJSON   = "request_json"
	SourceWebSocketJSON = "websocket_json"
	SourceActionJSON    = "action_json"
)

// credentialHeaders may never be matched literally; capture them through a
// sensitive alias instead.
var credentialHeaders = map[string]bool{
	"authorization": true, "cookie": true, "proxy-authorization": true, "set-cookie": true,
}

// IsCredentialHeader reports whether name (any case) is a credential
// header that a trigger may not match literally.
func IsCredentialHeader(name string) bool { return credentialHeaders[strings.ToLower(name)] }

// Machine is one validated replay machine with every default applied.
// Only ParseMachine and ParseRun produce usable machines.
type Machine struct {
	InitialState   string       `json:"initial_state"`
	States         []State      `json:"states"`
	Transitions    []Transition `json:"transitions"`
	MaxTransitions int          `json:"max_transitions"`
	Limits         Limits       `json:"limits"`

	validated bool
}

// State is one machine state.
type State struct {
	Name      string `json:"name"`
	Terminal  bool   `json:"terminal"`
	MaxVisits int    `json:"max_visits"`
}

// Transition is one edge of the machine.
type Transition struct {
	ID   string `json:"id"`
	From string `json:"from"`
	To   string `json:"to"`
	// Priority orders the candidates for one event: higher numbers are
	// tried first, equal ones in declaration order.
	Priority int       `json:"priority"`
	Trigger  Trigger   `json:"trigger"`
	Guards   []Guard   `json:"guards"`
	Captures []Capture `json:"captures"`
	Actions  []Action  `json:"actions"`
	MaxUses  int       `json:"max_uses"`

	payload *strictjson.Node // the action_json document (see ActionPayload), or nil
}

// Trigger selects the events a transition answers. Header names are lower
// case. Body nil matches any body (or none); otherwise the body must be
// exactly equal.
type Trigger struct {
	Protocol string
	Method   string            // http only
	Path     string            // request path (and query) for http and websocket_connect; the connection's path for websocket_message
	Headers  map[string]string // http and websocket_connect; every listed header must be present with exactly this value
	Body     *string           // http and websocket_message
}

// MarshalJSON writes the trigger in its protocol's shape.
func (t Trigger) MarshalJSON() ([]byte, error) {
	h := t.Headers
	if h == nil {
		h = map[string]string{}
	}
	switch t.Protocol {
	case ProtocolHTTP:
		return marshal(struct {
			Protocol string            `json:"protocol"`
			Method   string            `json:"method"`
			Path     string            `json:"path"`
			Headers  map[string]string `json:"headers"`
			Body     *string           `json:"body"`
		}{t.Protocol, t.Method, t.Path, h, t.Body})
	case ProtocolWebSocketConnect:
		return marshal(struct {
			Protocol string            `json:"protocol"`
			Path     string            `json:"path"`
			Headers  map[string]string `json:"headers"`
		}{t.Protocol, t.Path, h})
	}
	return marshal(struct {
		Protocol string  `json:"protocol"`
		Path     string  `json:"path"`
		Body     *string `json:"body"`
	}{t.Protocol, t.Path, t.Body})
}

// Source names where a guard or capture value comes from.
type Source struct {
	Source string     // one of the Source* constants
	Name   string     // request_header: the header name, lower case
	Path   []PathStep // the JSON sources: steps from the document root
}

// MarshalJSON writes the source in its kind's shape.
func (s Source) MarshalJSON() ([]byte, error) {
	if s.Source == SourceRequestHeader {
		return marshal(struct {
			Source string `json:"source"`
			Name   string `json:"name"`
		}{s.Source, s.Name})
	}
	p := s.Path
	if p == nil {
		p = []PathStep{}
	}
	return marshal(struct {
		Source string     `json:"source"`
		Path   []PathStep `json:"path"`
	}{s.Source, p})
}

// marshal encodes v as compact JSON without HTML escaping, so that action
// text reads as declared.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// PathStep is one step of a JSON source path: an object member name (a
// JSON string) or an array index (a JSON integer). Nothing is coerced: a
// name never indexes an array and an index never names a member.
type PathStep struct {
	Key     string
	Index   int
	IsIndex bool
}

// MarshalJSON writes the step as a string or an integer.
func (p PathStep) MarshalJSON() ([]byte, error) {
	if p.IsIndex {
		return []byte(strconv.Itoa(p.Index)), nil
	}
	return marshal(p.Key)
}

// Guard requires the value of Variable (captured earlier) to equal the
// value of Source in the current event.
type Guard struct {
	Variable string `json:"variable"`
	Value    Source `json:"value"`
}

// Capture stores the value of Source as Variable when the transition
// commits. A sensitive capture must be a non-empty string and is only ever
// shown as "<secret:Variable>".
type Capture struct {
	Variable  string `json:"variable"`
	Value     Source `json:"value"`
	Sensitive bool   `json:"sensitive"`
}

// Action is one thing the machine does when a transition commits.
type Action struct {
	Type       string            // one of the Action* constants
	Status     int               // http_response
	Headers    map[string]string // http_response, lower-case names
	Body       string            // http_response
	Data       string            // websocket_send
	DurationMS int               // delay
}

// MarshalJSON writes the action in its type's shape.
func (a Action) MarshalJSON() ([]byte, error) {
	switch a.Type {
	case ActionHTTPResponse:
		h := a.Headers
		if h == nil {
			h = map[string]string{}
		}
		return marshal(struct {
			Type    string            `json:"type"`
			Status  int               `json:"status"`
			Headers map[string]string `json:"headers"`
			Body    string            `json:"body"`
		}{a.Type, a.Status, h, a.Body})
	case ActionWebSocketSend:
		return marshal(struct {
			Type string `json:"type"`
			Data string `json:"data"`
		}{a.Type, a.Data})
	case ActionDelay:
		return marshal(struct {
			Type       string `json:"type"`
			DurationMS int    `json:"duration_ms"`
		}{a.Type, a.DurationMS})
	}
	return marshal(struct {
		Type string `json:"type"`
	}{a.Type})
}

// textFields is the number of action text fields: the body and each
// header of an http_response, the data of a websocket_send.
func (a Action) textFields() int {
	switch a.Type {
	case ActionHTTPResponse:
		return 1 + len(a.Headers)
	case ActionWebSocketSend:
		return 1
	}
	return 0
}

// payloadText returns the text an action_json source reads: the body of
// the first http_response or the data of the first websocket_send.
func payloadText(actions []Action) (string, bool) {
	for _, a := range actions {
		switch a.Type {
		case ActionHTTPResponse:
			return a.Body, true
		case ActionWebSocketSend:
			return a.Data, true
		}
	}
	return "", false
}

// Limits bound what one machine run admits. Usage counts every admitted
// event, including events refused later in dispatch.
type Limits struct {
	// Connections counts admitted websocket_connect events and HTTP
	// requests on a connection not seen before.
	Connections int `json:"connections"`
	// Messages counts admitted HTTP requests and WebSocket messages.
	Messages int `json:"messages"`
	// Bytes counts the body bytes of admitted HTTP requests and WebSocket
	// messages.
	Bytes int `json:"bytes"`
	// DurationMS is the latest at_ms an admitted event may have.
	DurationMS int `json:"duration_ms"`
}
