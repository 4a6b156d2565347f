package compare

import (
	"fmt"
	"slices"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// Trace verdicts.
const (
	VerdictEquivalent    = "equivalent"
	VerdictDifferent     = "different"
	VerdictNonconforming = "nonconforming"
	VerdictUnknown       = "unknown"
)

// Side statuses.
const (
	SidePass    = "pass"
	SideFail    = "fail"
	SideUnknown = "unknown"
)

// Diagnostic kinds.
const (
	DiagJournal     = "journal"
	DiagPredicate   = "predicate"
	DiagCardinality = "cardinality"
	DiagEdge        = "edge"
	DiagPrefix      = "prefix"
	DiagSuffix      = "suffix"
	DiagTrace       = "trace"
)

// maxDiagnosticLocations bounds the locations of one diagnostic.
const maxDiagnosticLocations = 16

// TraceResult is the trace verdict of a comparison: equivalent (both
// sides pass), different (exactly one fails, or they fail differently),
// nonconforming (both fail the same way) or unknown (a side could not be
// checked). Diagnostic is null when the verdict is equivalent.
type TraceResult struct {
	Verdict    string      `json:"verdict"`
	Left       TraceSide   `json:"left"`
	Right      TraceSide   `json:"right"`
	Diagnostic *Diagnostic `json:"diagnostic"`
}

// TraceSide is one capture's conformance to the trace spec. A passing side
// names its matched variant (finite_traces) or its satisfied constraints
// (partial_order); Trace is the sequence of matched events with their
// journal locations, whenever the journal could be projected.
type TraceSide struct {
	Status               string       `json:"status"`
	MatchedVariant       *string      `json:"matched_variant"`
	SatisfiedConstraints *Constraints `json:"satisfied_constraints"`
	Trace                []TraceStep  `json:"trace"`
	Diagnostic           *Diagnostic  `json:"diagnostic"`
}

// TraceStep is one journal record that matched a declared event.
type TraceStep struct {
	EventID      string `json:"event_id"`
	Source       string `json:"source"`
	CaptureOrder int    `json:"capture_order"`
	Location     string `json:"location"`
}

// Constraints are the partial-order constraints a side satisfied.
type Constraints struct {
	Cardinality     []EventCount  `json:"cardinality"`
	HappensBefore   []BeforeAfter `json:"happens_before"`
	NotBefore       []EventAnchor `json:"not_before"`
	UnorderedGroups [][]string    `json:"unordered_groups"`
	Prefix          []string      `json:"prefix"`
	Suffix          []string      `json:"suffix"`
}

// EventCount is how often an event occurred.
type EventCount struct {
	EventID string `json:"event_id"`
	Count   int    `json:"count"`
}

// BeforeAfter is a happens_before edge.
type BeforeAfter struct {
	Before string `json:"before"`
	After  string `json:"after"`
}

// EventAnchor is a not_before constraint.
type EventAnchor struct {
	Event  string `json:"event"`
	Anchor string `json:"anchor"`
}

// Diagnostic explains why a side failed or is unknown. Side is "left",
// "right" or "both"; EventIDs are the declared events involved and
// Locations the journal records (JSON paths in the capture Evidence).
type Diagnostic struct {
	Kind      string   `json:"kind"`
	Side      string   `json:"side"`
	Message   string   `json:"message"`
	EventIDs  []string `json:"event_ids"`
	Locations []string `json:"locations"`

	signature string // what else must agree for two failures to be the same
}

// sourceDim maps a trace source to the comparison dimension whose
// residual unknowns cover it.
var sourceDim = map[string]dim{
	"terminal_raw": dimTerminal, "terminal_rendered": dimTerminal, "interaction": dimInteraction,
	"lifecycle": dimExit, "process": dimProcess, "filesystem": dimFilesystem, "http": dimProtocol,
	"websocket": dimProtocol, "replay_transition": dimProtocol, "shim": dimShim,
}

var collectionSource = map[string]string{
	"frames": "terminal_raw", "rendered_frames": "terminal_rendered", "interaction_events": "interaction",
	"process_samples": "process", "filesystem_checkpoints": "filesystem", "shim_events": "shim",
	"replay_transitions": "replay_transition", "exit": "lifecycle", "settlement": "lifecycle",
}

// evaluateTrace checks both records against spec and combines the sides.
func evaluateTrace(spec *TraceSpec, l, r *record) TraceResult {
	var res TraceResult
	done := make(chan struct{})
	go func() { // the sides are independent
		defer close(done)
		res.Right = spec.evaluate(r, "right")
	}()
	res.Left = spec.evaluate(l, "left")
	<-done
	ls, rs := res.Left, res.Right
	switch {
	case ls.Status == SideUnknown || rs.Status == SideUnknown:
		res.Verdict = VerdictUnknown
		res.Diagnostic = ls.Diagnostic
		if ls.Status != SideUnknown {
			res.Diagnostic = rs.Diagnostic
		}
	case ls.Status == SidePass && rs.Status == SidePass:
		res.Verdict = VerdictEquivalent
	case ls.Status == SideFail && rs.Status == SideFail:
		if sameFailure(ls.Diagnostic, rs.Diagnostic) {
			res.Verdict = VerdictNonconforming
			d := *ls.Diagnostic
			d.Side = "both"
			d.Locations = append(slices.Clone(ls.Diagnostic.Locations), rs.Diagnostic.Locations...)
			res.Diagnostic = &d
		} else {
			res.Verdict = VerdictDifferent
			res.Diagnostic = ls.Diagnostic
		}
	case ls.Status == SideFail:
		res.Verdict, res.Diagnostic = VerdictDifferent, ls.Diagnostic
	default:
		res.Verdict, res.Diagnostic = VerdictDifferent, rs.Diagnostic
	}
	return res
}

// sameFailure reports whether two failures are the same violation: the
// same kind, message and events (their journal locations may differ).
func sameFailure(a, b *Diagnostic) bool {
	return a != nil && b != nil && a.Kind == b.Kind && a.Message == b.Message && slices.Equal(a.EventIDs, b.EventIDs) &&
		a.signature == b.signature
}

// step is one matched journal record.
type step struct {
	event int
	loc   string
	order int
}

// evaluate checks one record against the spec.
func (s *TraceSpec) evaluate(r *record, side string) TraceSide {
	unknown := func(msg string, events []string) TraceSide {
		return TraceSide{Status: SideUnknown, Trace: []TraceStep{},
			Diagnostic: &Diagnostic{Kind: DiagJournal, Side: side, Message: msg, EventIDs: strictjson.NonNil(events), Locations: []string{}}}
	}
	if r.truncated {
		return unknown("The capture is truncated, so its journal may be incomplete.", nil)
	}
	for _, ru := range r.residual {
		d, known := dimIndex(ru.scope)
		var covered []string
		for _, e := range s.events {
			if !known || sourceDim[e.source] == d {
				covered = append(covered, e.id)
			}
		}
		if len(covered) > 0 {
			return unknown(fmt.Sprintf("A residual unknown (%s: %s) covers a source the trace spec uses.", strictjson.Truncate(ru.scope, 64), strictjson.Truncate(ru.reason, 200)), covered)
		}
	}
	if len(r.journal) == 0 {
		return unknown("The capture has no event journal, so its event order is unknown.", nil)
	}
	fail := func(kind, msg string, events []int, locs []string) TraceSide {
		ids := make([]string, len(events))
		for i, e := range events {
			ids[i] = s.events[e].id
		}
		if len(locs) > maxDiagnosticLocations {
			locs = locs[:maxDiagnosticLocations]
		}
		return TraceSide{Status: SideFail, Trace: []TraceStep{},
			Diagnostic: &Diagnostic{Kind: kind, Side: side, Message: msg, EventIDs: strictjson.NonNil(ids), Locations: strictjson.NonNil(locs)}}
	}

	// Project the journal onto the declared sources.
	var steps []step
	for order, je := range r.journal {
		source, payload := project(r, je)
		ignore, declared := s.ignore[source]
		if !declared {
			continue
		}
		key := canonKey(payload, ignore)
		ev, ok := s.index[source][key]
		if !ok {
			t := fail(DiagPredicate, fmt.Sprintf("A %s record matches no declared event.", source), nil, []string{je.location()})
			t.Diagnostic.signature = source + "\x00" + key
			return t
		}
		steps = append(steps, step{ev, je.location(), order})
	}
	side0 := TraceSide{Status: SidePass, Trace: make([]TraceStep, len(steps))}
	for i, st := range steps {
		side0.Trace[i] = TraceStep{s.events[st.event].id, s.events[st.event].source, st.order, st.loc}
	}
	withTrace := func(t TraceSide) TraceSide { t.Trace = side0.Trace; return t }

	// Cardinality, in declaration order.
	counts := make([]int, len(s.events))
	first := make([]int, len(s.events))
	last := make([]int, len(s.events))
	for i := range first {
		first[i], last[i] = -1, -1
	}
	for pos, st := range steps {
		counts[st.event]++
		if first[st.event] < 0 {
			first[st.event] = pos
		}
		last[st.event] = pos
	}
	for e, ev := range s.events {
		if c := counts[e]; c < ev.min || c > ev.max {
			var locs []string
			for _, st := range steps {
				if st.event == e && len(locs) < maxDiagnosticLocations {
					locs = append(locs, st.loc)
				}
			}
			return withTrace(fail(DiagCardinality, fmt.Sprintf("%q occurs %d times; its cardinality allows %s.", ev.id, c, cardText(ev.min, ev.max)), []int{e}, locs))
		}
	}

	if s.lang == LanguageFiniteTraces {
		return withTrace(s.matchVariants(steps, fail, side0))
	}

	// Edges: happens_before, then not_before, in declaration order.
	for _, e := range s.hb {
		if first[e.a] >= 0 && first[e.b] >= 0 && last[e.a] > first[e.b] {
			return withTrace(fail(DiagEdge, fmt.Sprintf("%q occurs before %q, but happens_before requires %q first.",
				s.events[e.b].id, s.events[e.a].id, s.events[e.a].id), []int{e.a, e.b}, []string{steps[first[e.b]].loc, steps[last[e.a]].loc}))
		}
	}
	for _, e := range s.notBefore {
		if first[e.a] >= 0 && first[e.b] >= 0 && first[e.a] < first[e.b] {
			return withTrace(fail(DiagEdge, fmt.Sprintf("%q occurs before its anchor %q, which not_before forbids.",
				s.events[e.a].id, s.events[e.b].id), []int{e.a, e.b}, []string{steps[first[e.a]].loc, steps[first[e.b]].loc}))
		}
	}
	if d, ok := s.checkAnchored(steps, s.prefix, true); !ok {
		return withTrace(fail(DiagPrefix, d.msg, d.events, d.locs))
	}
	if d, ok := s.checkAnchored(steps, s.suffix, false); !ok {
		return withTrace(fail(DiagSuffix, d.msg, d.events, d.locs))
	}
	c := &Constraints{Cardinality: []EventCount{}, HappensBefore: []BeforeAfter{}, NotBefore: []EventAnchor{},
		UnorderedGroups: [][]string{}, Prefix: s.ids(s.prefix), Suffix: s.ids(s.suffix)}
	for e, ev := range s.events {
		c.Cardinality = append(c.Cardinality, EventCount{ev.id, counts[e]})
	}
	for _, e := range s.hb {
		c.HappensBefore = append(c.HappensBefore, BeforeAfter{s.events[e.a].id, s.events[e.b].id})
	}
	for _, e := range s.notBefore {
		c.NotBefore = append(c.NotBefore, EventAnchor{s.events[e.a].id, s.events[e.b].id})
	}
	for _, g := range s.groups {
		c.UnorderedGroups = append(c.UnorderedGroups, s.ids(g))
	}
	side0.SatisfiedConstraints = c
	return side0
}

func (s *TraceSpec) ids(list []int) []string {
	out := make([]string, len(list))
	for i, x := range list {
		out[i] = s.events[x].id
	}
	return out
}

type anchoredFailure struct {
	msg    string
	events []int
	locs   []string
}

// checkAnchored checks that the trace starts (prefix) or ends (suffix)
// with exactly list.
func (s *TraceSpec) checkAnchored(steps []step, list []int, prefix bool) (anchoredFailure, bool) {
	if len(list) == 0 {
		return anchoredFailure{}, true
	}
	name := "suffix"
	if prefix {
		name = "prefix"
	}
	if len(steps) < len(list) {
		return anchoredFailure{fmt.Sprintf("The trace has %d events, fewer than the %d of its %s.", len(steps), len(list), name), list, nil}, false
	}
	off := 0
	if !prefix {
		off = len(steps) - len(list)
	}
	for i, want := range list {
		got := steps[off+i]
		if got.event != want {
			return anchoredFailure{fmt.Sprintf("Position %d of the %s is %q, but the trace has %q there.", i, name, s.events[want].id, s.events[got.event].id),
				[]int{want, got.event}, []string{got.loc}}, false
		}
	}
	return anchoredFailure{}, true
}

// matchVariants finds the first variant that accepts the trace.
func (s *TraceSpec) matchVariants(steps []step, fail func(string, string, []int, []string) TraceSide, pass TraceSide) TraceSide {
	bestLen, bestVariant := -1, -1
	for vi, v := range s.variants {
		n, ok := matchVariant(v, steps)
		if ok {
			id := v.id
			pass.MatchedVariant = &id
			return pass
		}
		if n > bestLen {
			bestLen, bestVariant = n, vi
		}
	}
	v := s.variants[bestVariant]
	msg := fmt.Sprintf("The trace of %d events matches none of the %d declared variants; the closest, %q, agrees on its first %d events.",
		len(steps), len(s.variants), v.id, bestLen)
	var events []int
	var locs []string
	if bestLen < len(steps) {
		events = append(events, steps[bestLen].event)
		locs = append(locs, steps[bestLen].loc)
	}
	return fail(DiagTrace, msg, events, locs)
}

// matchVariant reports whether v accepts the trace, and otherwise how many
// leading events it matched.
func matchVariant(v variant, steps []step) (int, bool) {
	pos := 0
	for _, t := range v.tokens {
		if t.unordered == nil {
			if pos >= len(steps) || steps[pos].event != t.event {
				return pos, false
			}
			pos++
			continue
		}
		k := len(t.unordered)
		if pos+k > len(steps) {
			return pos, false
		}
		want := map[int]int{}
		for _, x := range t.unordered {
			want[x]++
		}
		for i := range k {
			e := steps[pos+i].event
			if want[e] == 0 {
				return pos + i, false
			}
			want[e]--
		}
		pos += k
	}
	return pos, pos == len(steps)
}

// project turns a journal entry into its trace source and payload.
func project(r *record, je journalEntry) (string, any) {
	switch je.collection {
	case "exit":
		return "lifecycle", map[string]any{"event": "exit", "code": r.exit["code"], "signal": r.exit["signal"], "reason": r.exit["reason"]}
	case "settlement":
		return "lifecycle", map[string]any{"event": "settlement", "state": r.settlement["state"],
			"elapsed_ms": r.settlement["elapsed_ms"], "cleanup_outcome": r.settlement["cleanup_outcome"]}
	}
	item := r.lists[je.collection][je.index]
	if je.collection == "protocol_events" {
		m, _ := item.(map[string]any)
		source, _ := m["protocol"].(string)
		return source, item
	}
	return collectionSource[je.collection], item
}

// location is the JSON path of the entry's observation in its Evidence.
func (je journalEntry) location() string {
	if je.collection == "exit" || je.collection == "settlement" {
		return root + "." + je.collection
	}
	return indexPath(root+"."+je.collection, je.index)
}
