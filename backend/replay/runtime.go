package replay

import (
	"cmp"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// Decision outcomes. OutcomeCommitted means a transition was taken; every
// other outcome is a refusal, which is data: the run goes on.
const (
	OutcomeCommitted           = "committed"
	OutcomeUnmatched           = "unmatched"            // no transition's trigger matches the event
	OutcomeInvalidState        = "invalid_state"        // triggers match, but none leaves the current state (or the connection is not open)
	OutcomeGuardFailed         = "guard_failed"         // every candidate has a failing guard
	OutcomeTransitionExhausted = "transition_exhausted" // max_transitions, every candidate's max_uses, or the target's max_visits is spent
	OutcomeInvalidCapture      = "invalid_capture"      // a capture source is absent (or a sensitive one is not a non-empty string)
	OutcomeUnexpectedReconnect = "unexpected_reconnect" // a websocket_connect on a connection that was already open
	OutcomeLimitExhausted      = "limit_exhausted"      // admitting the event would exceed a configured limit
)

// Event types.
const (
	EventHTTPRequest      = "http_request"
	EventWebSocketConnect = "websocket_connect"
	EventWebSocketMessage = "websocket_message"
)

// Event is one protocol event offered to the machine.
type Event struct {
	Type string
	// Connection identifies the client connection. WebSocket events need
	// one; an HTTP request without one counts as a new connection.
	Connection string
	Method     string            // http_request
	Path       string            // http_request, websocket_connect
	Headers    map[string]string // http_request, websocket_connect; lower-case names
	Body       *string           // http_request (nil: no body), websocket_message
	AtMS       int               // milliseconds since the run started
}

// Decision is the outcome of one offered event.
type Decision struct {
	EventSequence int    `json:"event_sequence"`
	Outcome       string `json:"outcome"`
	// TransitionSequence indexes the transition journal when the outcome
	// is committed, and is null otherwise.
	TransitionSequence *int `json:"transition_sequence"`
	// Reason names which check refused the event (for example
	// "max_uses", "messages", "connection_not_open"). It is fixed
	// vocabulary, never event content, and is not part of the result.
	Reason string `json:"-"`
	// TransitionID is the committed transition's id (not part of the
	// result; the journal has it).
	TransitionID string `json:"-"`
	// Actions are the committed transition's actions, unredacted, for a
	// live server to perform. They are never serialized.
	Actions []Action `json:"-"`
}

// JournalEntry records one committed transition. It names the variables
// captured, never their values.
type JournalEntry struct {
	Sequence         int      `json:"sequence"`
	EventSequence    int      `json:"event_sequence"`
	AtMS             int      `json:"at_ms"`
	TransitionID     string   `json:"transition_id"`
	StateBefore      string   `json:"state_before"`
	StateAfter       string   `json:"state_after"`
	SensitiveAliases []string `json:"sensitive_aliases"`
	Variables        []string `json:"variables"`
}

// ActionEntry is the redacted action table entry of one used transition.
type ActionEntry struct {
	TransitionID string   `json:"transition_id"`
	Uses         int      `json:"uses"`
	Actions      []Action `json:"actions"`
}

// LimitReport pairs the configured limits with the usage admitted.
type LimitReport struct {
	Configured Limits `json:"configured"`
	Usage      Limits `json:"usage"`
}

// ResultSchemaVersion is the schema_version of a Result.
const ResultSchemaVersion = 1

// Result is the redacted outcome of a run (docs/formats/replay-machine.md): one
// decision per offered event, the transition journal, one action-table
// entry per used transition (in order of first use), and the limits.
type Result struct {
	SchemaVersion     int            `json:"schema_version"`
	InitialState      string         `json:"initial_state"`
	FinalState        string         `json:"final_state"`
	Terminal          bool           `json:"terminal"`
	Decisions         []Decision     `json:"decisions"`
	TransitionJournal []JournalEntry `json:"transition_journal"`
	TransitionActions []ActionEntry  `json:"transition_actions"`
	Limits            LimitReport    `json:"limits"`
}

// Runtime dispatches events against one machine. It is safe for
// concurrent use; events are dispatched one at a time in call order.
type Runtime struct {
	mu        sync.Mutex
	m         *Machine
	stateIdx  map[string]int
	order     []int // transition indexes by priority (highest first), then declaration
	state     int
	visits    []int
	uses      []int
	committed int
	vars      map[string]*strictjson.Node
	secrets   []secret          // each distinct sensitive value once, under its first alias
	secretSet map[string]bool   // the values in secrets
	redactor  *strings.Replacer // for secrets; nil when stale
	conns     map[string]*conn
	usage     Limits
	decisions []Decision
	journal   []JournalEntry
	firstUse  []int // transition indexes in order of first use
}

type secret struct{ value, alias string }

type conn struct {
	websocket bool
	open      bool
	path      string
}

// ErrNotValidated is returned by NewRuntime for a machine that did not come
// from ParseMachine, ParseMachineAt or ParseRun.
var ErrNotValidated = errors.New("replay: the machine was not produced by ParseMachine or ParseRun")

// NewRuntime starts a run of m in its initial state (visited once).
func NewRuntime(m *Machine) (*Runtime, error) {
	if m == nil || !m.validated {
		return nil, ErrNotValidated
	}
	r := &Runtime{
		m:         m,
		stateIdx:  make(map[string]int, len(m.States)),
		visits:    make([]int, len(m.States)),
		uses:      make([]int, len(m.Transitions)),
		vars:      map[string]*strictjson.Node{},
		secretSet: map[string]bool{},
		conns:     map[string]*conn{},
	}
	for i, s := range m.States {
		r.stateIdx[s.Name] = i
	}
	r.state = r.stateIdx[m.InitialState]
	r.visits[r.state] = 1
	r.order = make([]int, len(m.Transitions))
	for i := range r.order {
		r.order[i] = i
	}
	slices.SortStableFunc(r.order, func(a, b int) int {
		return cmp.Compare(m.Transitions[b].Priority, m.Transitions[a].Priority)
	})
	return r, nil
}

// State returns the current state's name.
func (r *Runtime) State() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m.States[r.state].Name
}

// Dispatch offers one event and returns its decision. The checks run in
// the order of the spec: admission against the limits (usage counts even
// when a later check refuses), connection state, trigger and state match
// (by priority, then declaration), guards, max_transitions, max_uses
// (falling back to the next lower-priority candidate whose guards pass),
// the target's max_visits, capture validity, and commit.
func (r *Runtime) Dispatch(ev Event) Decision {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.dispatch(ev)
	kept := d
	kept.Actions = nil
	r.decisions = append(r.decisions, kept)
	if d.Actions != nil {
		d.Actions = slices.Clone(d.Actions)
	}
	return d
}

func (r *Runtime) dispatch(ev Event) Decision {
	d := Decision{EventSequence: len(r.decisions)}
	refuse := func(outcome, reason string) Decision {
		d.Outcome, d.Reason = outcome, reason
		return d
	}
	bodyLen := 0
	if ev.Body != nil {
		bodyLen = len(*ev.Body)
	}

	// Admission.
	var known *conn
	if ev.Connection != "" {
		known = r.conns[ev.Connection]
	}
	var delta Limits
	switch ev.Type {
	case EventHTTPRequest:
		if known == nil {
			delta.Connections = 1
		}
		delta.Messages, delta.Bytes = 1, bodyLen
	case EventWebSocketConnect:
		delta.Connections = 1
	case EventWebSocketMessage:
		delta.Messages, delta.Bytes = 1, bodyLen
	default:
		return refuse(OutcomeUnmatched, "unknown_event_type")
	}
	lim := r.m.Limits
	switch {
	case ev.AtMS < 0 || ev.AtMS > lim.DurationMS:
		return refuse(OutcomeLimitExhausted, "duration_ms")
	case r.usage.Connections+delta.Connections > lim.Connections:
		return refuse(OutcomeLimitExhausted, "connections")
	case r.usage.Messages+delta.Messages > lim.Messages:
		return refuse(OutcomeLimitExhausted, "messages")
	case r.usage.Bytes+delta.Bytes > lim.Bytes:
		return refuse(OutcomeLimitExhausted, "bytes")
	}
	r.usage.Connections += delta.Connections
	r.usage.Messages += delta.Messages
	r.usage.Bytes += delta.Bytes
	r.usage.DurationMS = max(r.usage.DurationMS, ev.AtMS)
	if ev.Type == EventHTTPRequest && ev.Connection != "" && known == nil {
		r.conns[ev.Connection] = &conn{}
	}

	// Connection state.
	path := ev.Path
	switch ev.Type {
	case EventWebSocketConnect:
		if known != nil {
			return refuse(OutcomeUnexpectedReconnect, "connection_already_used")
		}
	case EventWebSocketMessage:
		if known == nil || !known.websocket || !known.open {
			return refuse(OutcomeInvalidState, "connection_not_open")
		}
		path = known.path
	}

	// Trigger and state match.
	m := r.m
	cur := m.States[r.state].Name
	matched := false
	var cands []int
	for _, i := range r.order {
		t := &m.Transitions[i]
		if !triggerMatches(&t.Trigger, &ev, path) {
			continue
		}
		matched = true
		if t.From == cur {
			cands = append(cands, i)
		}
	}
	if !matched {
		return refuse(OutcomeUnmatched, "no_trigger")
	}
	if len(cands) == 0 {
		return refuse(OutcomeInvalidState, "no_transition_from_state")
	}

	// Guards.
	src := sources{ev: &ev}
	passing := cands[:0]
	for _, i := range cands {
		if r.guardsPass(&m.Transitions[i], &src) {
			passing = append(passing, i)
		}
	}
	if len(passing) == 0 {
		return refuse(OutcomeGuardFailed, "guards")
	}

	// max_transitions, then max_uses with fallback.
	if r.committed >= m.MaxTransitions {
		return refuse(OutcomeTransitionExhausted, "max_transitions")
	}
	chosen := -1
	for _, i := range passing {
		if r.uses[i] < m.Transitions[i].MaxUses {
			chosen = i
			break
		}
	}
	if chosen < 0 {
		return refuse(OutcomeTransitionExhausted, "max_uses")
	}
	t := &m.Transitions[chosen]
	d.TransitionID = t.ID

	// The target's max_visits.
	to := r.stateIdx[t.To]
	if r.visits[to] >= m.States[to].MaxVisits {
		return refuse(OutcomeTransitionExhausted, "max_visits")
	}

	// Capture validity.
	values := make([]*strictjson.Node, len(t.Captures))
	for k, cp := range t.Captures {
		v, ok := src.resolve(cp.Value, t)
		if !ok || cp.Sensitive && (v.Kind != strictjson.String || v.Str == "") {
			return refuse(OutcomeInvalidCapture, "capture")
		}
		values[k] = v
	}

	// Commit.
	entry := JournalEntry{
		Sequence:         len(r.journal),
		EventSequence:    d.EventSequence,
		AtMS:             ev.AtMS,
		TransitionID:     t.ID,
		StateBefore:      cur,
		StateAfter:       t.To,
		SensitiveAliases: []string{},
		Variables:        []string{},
	}
	for k, cp := range t.Captures {
		r.vars[cp.Variable] = values[k]
		entry.Variables = append(entry.Variables, cp.Variable)
		if cp.Sensitive {
			entry.SensitiveAliases = append(entry.SensitiveAliases, cp.Variable)
			if v := values[k].Str; !r.secretSet[v] {
				r.secretSet[v] = true
				r.secrets = append(r.secrets, secret{v, cp.Variable})
				r.redactor = nil
			}
		}
	}
	if r.uses[chosen] == 0 {
		r.firstUse = append(r.firstUse, chosen)
	}
	r.uses[chosen]++
	r.committed++
	r.visits[to]++
	r.state = to
	switch ev.Type {
	case EventWebSocketConnect:
		known = &conn{websocket: true, open: true, path: ev.Path}
		r.conns[ev.Connection] = known
	}
	if known != nil && known.websocket {
		for _, a := range t.Actions {
			if a.Type == ActionDisconnect {
				known.open = false
			}
		}
	}
	seq := entry.Sequence
	r.journal = append(r.journal, entry)
	d.Outcome = OutcomeCommitted
	d.TransitionSequence = &seq
	d.Actions = t.Actions
	return d
}

// triggerMatches reports whether trigger t matches ev; path is the
// request path, or the connection's path for a WebSocket message.
func triggerMatches(t *Trigger, ev *Event, path string) bool {
	switch t.Protocol {
	case ProtocolHTTP:
		if ev.Type != EventHTTPRequest || ev.Method != t.Method {
			return false
		}
	case ProtocolWebSocketConnect:
		if ev.Type != EventWebSocketConnect {
			return false
		}
	case ProtocolWebSocketMessage:
		if ev.Type != EventWebSocketMessage {
			return false
		}
	default:
		return false
	}
	if path != t.Path {
		return false
	}
	for name, want := range t.Headers {
		got, ok := ev.Headers[name]
		if !ok || got != want {
			return false
		}
	}
	if t.Body != nil && (ev.Body == nil || *ev.Body != *t.Body) {
		return false
	}
	return true
}

// sources resolves guard and capture sources against one event, parsing
// its body as JSON at most once.
type sources struct {
	ev     *Event
	parsed bool
	body   *strictjson.Node
}

func (s *sources) resolve(src Source, t *Transition) (*strictjson.Node, bool) {
	switch src.Source {
	case SourceRequestHeader:
		if s.ev.Type == EventWebSocketMessage {
			return nil, false
		}
		h, ok := s.ev.Headers[src.Name]
		if !ok {
			return nil, false
		}
		return &strictjson.Node{Kind: strictjson.String, Str: h}, true
	case SourceRequestJSON, SourceWebSocketJSON:
		want := EventHTTPRequest
		if src.Source == SourceWebSocketJSON {
			want = EventWebSocketMessage
		}
		if s.ev.Type != want || s.ev.Body == nil {
			return nil, false
		}
		if !s.parsed {
			s.parsed = true
			if doc, ok := parseBody(*s.ev.Body); ok {
				s.body = doc
			}
		}
		if s.body == nil {
			return nil, false
		}
		return follow(s.body, src.Path)
	case SourceActionJSON:
		if t.payload == nil {
			return nil, false
		}
		return follow(t.payload, src.Path)
	}
	return nil, false
}

func (r *Runtime) guardsPass(t *Transition, src *sources) bool {
	for _, g := range t.Guards {
		want, ok := r.vars[g.Variable]
		if !ok {
			return false
		}
		got, ok := src.resolve(g.Value, t)
		if !ok || !strictjson.Equal(want, got) {
			return false
		}
	}
	return true
}

// Redact replaces every sensitive value captured so far in s with
// "<secret:ALIAS>". Longer values are replaced first; a value captured
// under several aliases takes the first alias it was captured as.
func (r *Runtime) Redact(s string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.redact(s)
}

func (r *Runtime) redact(s string) string {
	if len(r.secrets) == 0 {
		return s
	}
	if r.redactor == nil {
		uniq := slices.Clone(r.secrets)
		slices.SortStableFunc(uniq, func(a, b secret) int { return cmp.Compare(len(b.value), len(a.value)) })
		pairs := make([]string, 0, 2*len(uniq))
		for _, sc := range uniq {
			pairs = append(pairs, sc.value, "<secret:"+sc.alias+">")
		}
		r.redactor = strings.NewReplacer(pairs...)
	}
	return r.redactor.Replace(s)
}

// Result returns the run so far with every string that comes from the
// machine or the events redacted.
func (r *Runtime) Result() Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	red := r.redact
	m := r.m
	res := Result{
		SchemaVersion:     ResultSchemaVersion,
		InitialState:      red(m.InitialState),
		FinalState:        red(m.States[r.state].Name),
		Terminal:          m.States[r.state].Terminal,
		Decisions:         make([]Decision, len(r.decisions)),
		TransitionJournal: make([]JournalEntry, len(r.journal)),
		TransitionActions: make([]ActionEntry, 0, len(r.firstUse)),
		Limits:            LimitReport{Configured: m.Limits, Usage: r.usage},
	}
	for i, d := range r.decisions {
		res.Decisions[i] = Decision{EventSequence: d.EventSequence, Outcome: d.Outcome, TransitionSequence: d.TransitionSequence, Reason: d.Reason, TransitionID: red(d.TransitionID)}
	}
	redAll := func(l []string) []string {
		out := make([]string, len(l))
		for i, s := range l {
			out[i] = red(s)
		}
		return out
	}
	for i, e := range r.journal {
		e.TransitionID = red(e.TransitionID)
		e.StateBefore = red(e.StateBefore)
		e.StateAfter = red(e.StateAfter)
		e.SensitiveAliases = redAll(e.SensitiveAliases)
		e.Variables = redAll(e.Variables)
		res.TransitionJournal[i] = e
	}
	for _, i := range r.firstUse {
		t := &m.Transitions[i]
		acts := make([]Action, len(t.Actions))
		for k, a := range t.Actions {
			if a.Headers != nil {
				h := make(map[string]string, len(a.Headers))
				for n, v := range a.Headers {
					h[red(n)] = red(v)
				}
				a.Headers = h
			}
			a.Body, a.Data = red(a.Body), red(a.Data)
			acts[k] = a
		}
		res.TransitionActions = append(res.TransitionActions, ActionEntry{TransitionID: red(t.ID), Uses: r.uses[i], Actions: acts})
	}
	return res
}
