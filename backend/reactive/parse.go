package reactive

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// Limits of Parse.
const (
	// MaxInputBytes is the largest document Parse reads.
	MaxInputBytes = 4 << 20
	// MaxDepth is the deepest JSON nesting Parse admits.
	MaxDepth = 64
	// MaxValues is the most JSON values Parse admits.
	MaxValues = 200_000
)

var (
	idRE         = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	checkpointRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)
	eventIDRE    = regexp.MustCompile(`^(frames|interaction_events|process_samples|filesystem_checkpoints|shim_events|protocol_events)\[(0|[1-9][0-9]{0,8})\]$`)
	signals      = []string{"SIGINT", "SIGTERM", "SIGKILL"}
)

// Reserved checkpoint names of the capture (docs/formats/reactive-scenario.md).
const (
	checkpointBefore          = "before"
	checkpointAfterSettlement = "after_settlement"
)

// Context is what a reactive scenario is checked against from the capture
// scenario that holds it.
type Context struct {
	// TimeoutMS is the capture's timeout_ms; the scenario deadline must
	// not exceed it (0: not checked).
	TimeoutMS int
	// Checkpoints are the capture scenario's checkpoint names; checkpoint
	// frontiers may name them, checkpoint actions may not reuse them.
	Checkpoints []string
}

var options = strictjson.Options{
	MaxDepth: MaxDepth, MaxValues: MaxValues, Surrogates: true, ExactNumbers: true,
	Wording: strictjson.Wording{
		Detailed: true,
		Trailing: "data follows the reactive scenario at byte offset %d",
	},
}

// Parse strictly parses one reactive scenario document (the object of
// the capture scenario's "reactive" member) with issues below "$".
//
// The input must be at most MaxInputBytes of valid UTF-8 holding exactly
// one JSON object, nested at most MaxDepth deep, with no duplicate member
// names, no unpaired surrogate escapes and only numbers RFC 8785 keeps
// exactly. See Check for the schema rules. It never panics.
func Parse(data []byte, ctx Context) (*Scenario, []Issue) {
	if len(data) > MaxInputBytes {
		return nil, []Issue{{Code: CodeTooLarge, Path: "$", Message: fmt.Sprintf("the reactive scenario is %d bytes; the limit is %d bytes", len(data), MaxInputBytes)}}
	}
	if !utf8.Valid(data) {
		return nil, []Issue{{Code: CodeInvalidUTF8, Path: "$", Message: "the reactive scenario is not valid UTF-8"}}
	}
	var issues strictjson.Collector
	n := strictjson.Decode(data, "$", options, &issues)
	if n == nil || !issues.Empty() {
		return nil, issues.List
	}
	sc := Check(n, "$", ctx, &issues)
	if !issues.Empty() {
		return nil, issues.List
	}
	return sc, nil
}

// Check validates a decoded reactive scenario at path and reports every
// violation to issues; it returns the scenario with defaults applied, or
// nil when anything was reported.
//
// Schema: {version: 1, initial_state, deadline_ms 1–300000, states 1–64
// [{id, max_visits 1–1000 (1), deadline_ms 1–300000, on 1–32 [{id,
// priority 0–1000000, max_uses 1–1000 (1), when: Trigger, actions 0–16
// (none), target: {kind: goto, state} | {kind: finish, outcome:
// passed}}]}]}. Triggers: {kind: terminal_text, text 1–10000 chars,
// occurrence 1–1000 (1), since (state_entry), consume (true)} | {kind:
// event, source, exact: {field: value} 1–16 fields of the source's
// payload, occurrence (1), since (state_entry)} | {kind: all|any, of: 2–16}
// | {kind: sequence, of: 1–16} | {kind: repeat, min 1–64, max min–64,
// of: Trigger}, nested at most 8 deep and 4096 nodes in all. Frontiers:
// {kind: scenario_start|state_entry} | {kind: checkpoint, name} | {kind:
// event_id, id: "collection[index]"}. Actions: {type: send_input, data
// 1–65536 chars, sensitive (false)} | {type: resize, columns, rows 1–1000}
// | {type: close_stdin} | {type: send_signal, signal, selector (root)} |
// {type: checkpoint, name}.
//
// Graph rules: unique state ids and transition ids, known initial and
// goto states, every state reachable from the initial state and able to
// reach a finish transition, no two transitions of a state with the same
// priority and trigger, state deadlines within the scenario deadline and
// that within ctx.TimeoutMS, checkpoint frontiers naming "before", a
// scenario checkpoint or a checkpoint action, checkpoint action names
// unique, unreserved, not a scenario checkpoint and only on transitions
// with max_uses 1, and at most MaxDispatchedAction possible dispatched
// actions. Sources and selectors that fail preflight are accepted here.
func Check(n *strictjson.Node, path string, ctx Context, issues *strictjson.Collector) *Scenario {
	// Issues are gathered apart, so that a caller's collector that is
	// already full cannot hide them (the graph rules need a valid tree).
	var own strictjson.Collector
	p := &parser{Checker: strictjson.Checker{Issues: &own}}
	sc := p.scenario(n, path)
	if own.Empty() {
		p.graph(sc, path, ctx)
	}
	for _, is := range own.List {
		issues.Add(is.Path, is.Code, "%s", is.Message)
	}
	if !own.Empty() {
		return nil
	}
	return sc
}

type parser struct {
	strictjson.Checker
	nodes int // trigger nodes so far
}

func (p *parser) scenario(n *strictjson.Node, path string) *Scenario {
	m, _ := p.Object(n, path, "version", "initial_state", "deadline_ms", "states")
	if m == nil {
		return nil
	}
	sc := &Scenario{States: []State{}}
	if v, ok := p.Required(m, path, "version"); ok {
		if x, ok := p.Integer(v, path+".version", 0, 1<<30); ok && x != Version {
			p.Add(path+".version", CodeUnsupportedVersion, "version %d is not supported; only version 1", x)
		}
		sc.Version = Version
	}
	sc.InitialState, _ = p.id(m, path, "initial_state")
	sc.DeadlineMS, _ = p.ReqInt(m, path, "deadline_ms", 1, MaxDeadlineMS)
	p.List(m, path, "states", true, 1, MaxStates, func(_ int, e *strictjson.Node, at string) bool {
		sc.States = append(sc.States, p.state(e, at))
		return true
	})
	return sc
}

// id reads a required id member.
func (p *parser) id(m strictjson.Members, path, key string) (string, bool) {
	s, ok := p.ReqStr(m, path, key)
	if !ok {
		return "", false
	}
	if !idRE.MatchString(s) {
		p.Add(path+"."+key, CodeInvalidName, "%q does not match %s", strictjson.Truncate(s, 64), idRE)
		return "", false
	}
	return s, true
}

func (p *parser) state(n *strictjson.Node, path string) State {
	m, _ := p.Object(n, path, "id", "max_visits", "deadline_ms", "on")
	st := State{On: []Transition{}}
	if m == nil {
		return st
	}
	st.ID, _ = p.id(m, path, "id")
	st.MaxVisits, _ = p.IntField(m, path, "max_visits", 1, MaxVisits, 1)
	st.DeadlineMS, _ = p.ReqInt(m, path, "deadline_ms", 1, MaxDeadlineMS)
	p.List(m, path, "on", true, 1, MaxTransitions, func(_ int, e *strictjson.Node, at string) bool {
		st.On = append(st.On, p.transition(e, at))
		return true
	})
	return st
}

func (p *parser) transition(n *strictjson.Node, path string) Transition {
	m, _ := p.Object(n, path, "id", "priority", "max_uses", "when", "actions", "target")
	t := Transition{Actions: []Action{}}
	if m == nil {
		return t
	}
	t.ID, _ = p.id(m, path, "id")
	t.Priority, _ = p.ReqInt(m, path, "priority", 0, MaxPriority)
	t.MaxUses, _ = p.IntField(m, path, "max_uses", 1, MaxUses, 1)
	if v, ok := p.Required(m, path, "when"); ok {
		t.When = p.trigger(v, path+".when", 1)
	}
	p.List(m, path, "actions", false, 0, MaxActions, func(_ int, e *strictjson.Node, at string) bool {
		t.Actions = append(t.Actions, p.action(e, at))
		return true
	})
	if v, ok := p.Required(m, path, "target"); ok {
		t.Target = p.target(v, path+".target")
	}
	return t
}

func (p *parser) target(n *strictjson.Node, path string) Target {
	k, ok := p.Variant(n, path, "kind", TargetGoto, TargetFinish)
	if !ok {
		return Target{}
	}
	t := Target{Kind: k}
	if k == TargetGoto {
		m, _ := p.Object(n, path, "kind", "state")
		t.State, _ = p.id(m, path, "state")
		return t
	}
	m, _ := p.Object(n, path, "kind", "outcome")
	if v, ok := p.Required(m, path, "outcome"); ok {
		if s, ok := p.Str(v, path+".outcome"); ok && s != Passed {
			p.Add(path+".outcome", CodeInvalidValue, "a finish target's outcome must be %q", Passed)
		}
		t.Outcome = Passed
	}
	return t
}

func (p *parser) trigger(n *strictjson.Node, path string, depth int) *Trigger {
	t := &Trigger{id: p.nodes}
	p.nodes++
	if p.nodes == MaxTriggerNodes+1 {
		p.Add(path, CodeTooLarge, "the graph holds more than %d trigger nodes", MaxTriggerNodes)
	}
	if depth > MaxTriggerDepth {
		p.Add(path, CodeTooDeep, "triggers nest more than %d levels", MaxTriggerDepth)
		return t
	}
	k, ok := p.Variant(n, path, "kind", KindTerminalText, KindEvent, KindAll, KindAny, KindSequence, KindRepeat)
	if !ok {
		return t
	}
	t.Kind = k
	switch k {
	case KindTerminalText:
		m, _ := p.Object(n, path, "kind", "text", "occurrence", "since", "consume")
		if s, ok := p.ReqStr(m, path, "text"); ok {
			if c := utf8.RuneCountInString(s); c < 1 || c > MaxTextChars {
				p.Add(path+".text", CodeInvalidLength, "has %d characters; 1–%d are allowed", c, MaxTextChars)
			}
			t.Text = s
		}
		t.Occurrence, _ = p.IntField(m, path, "occurrence", 1, MaxOccurrence, 1)
		t.Since = p.frontier(m, path)
		t.Consume, _ = p.BoolField(m, path, "consume", true)
	case KindEvent:
		m, _ := p.Object(n, path, "kind", "source", "exact", "occurrence", "since")
		if v, ok := p.Required(m, path, "source"); ok {
			if s, ok := p.Str(v, path+".source"); ok {
				if _, known := sourceFields[s]; known {
					t.Source = s
				} else {
					p.Add(path+".source", CodeInvalidVariant, "%q is not one of %s", strictjson.Truncate(s, 64), strings.Join(sources, ", "))
				}
			}
		}
		if v, ok := p.Required(m, path, "exact"); ok {
			p.exact(t, v, path+".exact")
		}
		t.Occurrence, _ = p.IntField(m, path, "occurrence", 1, MaxOccurrence, 1)
		t.Since = p.frontier(m, path)
	case KindRepeat:
		m, _ := p.Object(n, path, "kind", "min", "max", "of")
		var minOK bool
		t.Min, minOK = p.ReqInt(m, path, "min", 1, MaxRepeat)
		if v, ok := p.Required(m, path, "max"); ok {
			lo := 1
			if minOK {
				lo = t.Min
			}
			t.Max, _ = p.Integer(v, path+".max", lo, MaxRepeat)
		}
		if v, ok := p.Required(m, path, "of"); ok {
			t.Of = []*Trigger{p.trigger(v, path+".of", depth+1)}
		}
	default:
		m, _ := p.Object(n, path, "kind", "of")
		lo := MinCombinator
		if k == KindSequence {
			lo = 1
		}
		p.List(m, path, "of", true, lo, MaxCombinator, func(_ int, e *strictjson.Node, at string) bool {
			t.Of = append(t.Of, p.trigger(e, at, depth+1))
			return true
		})
	}
	return t
}

// exact reads an event trigger's exact payload fields.
func (p *parser) exact(t *Trigger, v *strictjson.Node, path string) {
	if v.Kind != strictjson.Object {
		p.Add(path, CodeWrongType, "must be an object, not %s", v.Kind)
		return
	}
	switch {
	case len(v.Keys) == 0:
		p.Add(path, CodeTooFewEntries, "names no field; at least 1 is required")
		return
	case len(v.Keys) > MaxExactFields:
		p.Add(path, CodeTooManyEntries, "has %d fields; at most %d are allowed", len(v.Keys), MaxExactFields)
		return
	}
	t.Exact = map[string]json.RawMessage{}
	allowed := sourceFields[t.Source]
	for i, k := range v.Keys {
		if _, dup := t.Exact[k]; dup {
			continue // reported by the decoder
		}
		if t.Source != "" && !slices.Contains(allowed, k) {
			p.Add(path+strictjson.KeyPath(k), CodeUnknownField, "%s payloads have no field %q; they have %s", t.Source, strictjson.Truncate(k, 64), strings.Join(allowed, ", "))
			continue
		}
		t.Exact[k] = v.Vals[i].Raw()
		t.exact = append(t.exact, exactField{name: k, value: v.Vals[i]})
	}
	sort.Slice(t.exact, func(i, j int) bool { return t.exact[i].name < t.exact[j].name })
}

// frontier reads the optional since member (default state_entry).
func (p *parser) frontier(m strictjson.Members, path string) Frontier {
	v, ok := m["since"]
	if !ok {
		return Frontier{Kind: SinceStateEntry}
	}
	path += ".since"
	k, ok := p.Variant(v, path, "kind", SinceScenarioStart, SinceStateEntry, SinceCheckpoint, SinceEventID)
	if !ok {
		return Frontier{}
	}
	f := Frontier{Kind: k}
	switch k {
	case SinceCheckpoint:
		fm, _ := p.Object(v, path, "kind", "name")
		if s, ok := p.ReqStr(fm, path, "name"); ok {
			if !checkpointRE.MatchString(s) {
				p.Add(path+".name", CodeInvalidName, "%q does not match %s", strictjson.Truncate(s, 64), checkpointRE)
			}
			f.Name = s
		}
	case SinceEventID:
		fm, _ := p.Object(v, path, "kind", "id")
		if s, ok := p.ReqStr(fm, path, "id"); ok {
			if !eventIDRE.MatchString(s) {
				p.Add(path+".id", CodeInvalidName, "%q is not an event id such as frames[0] (collection[index] of frames, interaction_events, process_samples, filesystem_checkpoints, shim_events or protocol_events)", strictjson.Truncate(s, 64))
			}
			f.ID = s
		}
	default:
		p.Object(v, path, "kind")
	}
	return f
}

func (p *parser) action(n *strictjson.Node, path string) Action {
	typ, ok := p.Variant(n, path, "type", ActionSendInput, ActionResize, ActionCloseStdin, ActionSendSignal, ActionCheckpoint)
	if !ok {
		return Action{}
	}
	a := Action{Type: typ}
	switch typ {
	case ActionSendInput:
		m, _ := p.Object(n, path, "type", "data", "sensitive")
		if s, ok := p.ReqStr(m, path, "data"); ok {
			if c := utf8.RuneCountInString(s); c < 1 || c > MaxInputChars {
				p.Add(path+".data", CodeInvalidLength, "has %d characters; 1–%d are allowed", c, MaxInputChars)
			}
			a.Data = s
		}
		a.Sensitive, _ = p.BoolField(m, path, "sensitive", false)
	case ActionResize:
		m, _ := p.Object(n, path, "type", "columns", "rows")
		a.Columns, _ = p.ReqInt(m, path, "columns", 1, MaxTerminalSize)
		a.Rows, _ = p.ReqInt(m, path, "rows", 1, MaxTerminalSize)
	case ActionSendSignal:
		m, _ := p.Object(n, path, "type", "signal", "selector")
		if v, ok := p.Required(m, path, "signal"); ok {
			if s, ok := p.Str(v, path+".signal"); ok {
				if !slices.Contains(signals, s) {
					p.Add(path+".signal", CodeInvalidVariant, "%q is not one of %s", strictjson.Truncate(s, 64), strings.Join(signals, ", "))
				}
				a.Signal = s
			}
		}
		a.Selector = SelectorRoot
		if v, ok := m["selector"]; ok {
			if s, ok := p.Str(v, path+".selector"); ok {
				if s != SelectorRoot && s != SelectorProcessGroup && s != SelectorDescendants {
					p.Add(path+".selector", CodeInvalidVariant, "%q is not one of root, process_group, descendants", strictjson.Truncate(s, 64))
				}
				a.Selector = s
			}
		}
	case ActionCheckpoint:
		m, _ := p.Object(n, path, "type", "name")
		if s, ok := p.ReqStr(m, path, "name"); ok {
			switch {
			case !checkpointRE.MatchString(s):
				p.Add(path+".name", CodeInvalidName, "%q does not match %s", strictjson.Truncate(s, 64), checkpointRE)
			case s == checkpointBefore || s == checkpointAfterSettlement:
				p.Add(path+".name", CodeReservedName, "%q is reserved for the capture's own checkpoints", s)
			}
			a.Name = s
		}
	default:
		p.Object(n, path, "type")
	}
	return a
}
