package compare

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// Bounds of trace specs (version 1).
const (
	// MaxTraceSpecBytes is the largest trace spec ParseTraceSpec reads;
	// larger input is refused before parsing.
	MaxTraceSpecBytes = 64 << 20
	// MaxTraceEvents is the most events a trace spec declares.
	MaxTraceEvents = 256
	// MaxCardinality bounds exact counts and range maxima.
	MaxCardinality = 10000
	// MaxTraceVariants is the most variants of a finite_traces language.
	MaxTraceVariants = 256
	// MaxTraceIssues is the most issues reported for one trace spec.
	MaxTraceIssues = 100
)

// Issue codes of trace spec rejections, each rule with its own code.
const (
	TraceCodeTooLarge            = "too_large"
	TraceCodeInvalidUTF8         = "invalid_utf8"
	TraceCodeInvalidJSON         = "invalid_json"
	TraceCodeUnknownField        = "unknown_field"
	TraceCodeMissingField        = "missing_field"
	TraceCodeWrongType           = "wrong_type"
	TraceCodeInvalidValue        = "invalid_value"
	TraceCodeOutOfRange          = "out_of_range"
	TraceCodeUnsupportedVersion  = "unsupported_version"
	TraceCodeDuplicateID         = "duplicate_event_id"
	TraceCodeIgnoreMismatch      = "inconsistent_ignore_fields"
	TraceCodeIgnoredInExact      = "ignored_field_in_exact"
	TraceCodeOverlapping         = "overlapping_predicates"
	TraceCodeUnknownReference    = "unknown_reference"
	TraceCodeSelfEdge            = "self_edge"
	TraceCodeCycle               = "cycle"
	TraceCodeNotBeforeConflict   = "not_before_conflict"
	TraceCodeRepeatedPair        = "repeated_pair"
	TraceCodeOrderedAndUnordered = "ordered_and_unordered"
	TraceCodeUnrelatedPair       = "unrelated_pair"
	TraceCodePrefixConflict      = "prefix_conflict"
	TraceCodeSuffixConflict      = "suffix_conflict"
	TraceCodeDuplicateVariantID  = "duplicate_variant_id"
	TraceCodeDuplicateVariant    = "duplicate_variant"
	TraceCodeVariantCardinality  = "variant_cardinality"
	TraceCodeTooManyIssues       = "too_many_issues"
)

// traceSources are the journal sources a trace event may name.
var traceSources = []string{
	"terminal_raw", "terminal_rendered", "interaction", "lifecycle", "process",
	"filesystem", "http", "websocket", "shim", "replay_transition",
}

// ignorableFields are the top-level payload fields an event may ignore.
var ignorableFields = []string{"sequence", "at_ms", "scheduled_at_ms", "dispatched_at_ms", "elapsed_ms"}

// Trace languages.
const (
	LanguagePartialOrder = "partial_order"
	LanguageFiniteTraces = "finite_traces"
)

// TraceSpec is a parsed trace spec (version 1) that passed every rule of
// docs/formats/trace-spec.md. Obtain one with ParseTraceSpec.
type TraceSpec struct {
	raw    json.RawMessage // RFC 8785 form of the spec, for the Evidence parameters
	events []traceEvent
	byID   map[string]int
	// per declared source: its ignore set and its predicates by the
	// canonical key of their exact payload
	ignore map[string]map[string]bool
	index  map[string]map[string]int
	lang   string
	// partial_order
	hb        []pair // before, after
	notBefore []pair // event, anchor
	groups    [][]int
	prefix    []int
	suffix    []int
	// finite_traces
	variants []variant
}

type traceEvent struct {
	id       string
	source   string
	min, max int
}

type pair struct{ a, b int }

type variant struct {
	id     string
	tokens []token
}

// token is one element of a variant: a single event, or (unordered
// non-nil) a permutation of a multiset of events.
type token struct {
	event     int
	unordered []int
}

// Language returns LanguagePartialOrder or LanguageFiniteTraces.
func (s *TraceSpec) Language() string { return s.lang }

// EventIDs returns the declared event ids in declaration order.
func (s *TraceSpec) EventIDs() []string {
	out := make([]string, len(s.events))
	for i, e := range s.events {
		out[i] = e.id
	}
	return out
}

// ParseTraceSpec strictly parses and validates a trace spec (version 1):
//
//	{version: 1,
//	 events: [{id, source, exact, ignore_fields?, cardinality?}],   1–256 events
//	 language: {kind: "partial_order", happens_before: [{before, after}],
//	            not_before: [{event, anchor}], unordered_groups: [{events: [...]}],
//	            prefix: [...], suffix: [...]}
//	         | {kind: "finite_traces", variants: [{id, trace: [id | {unordered: [ids]}]}]}}
//
// Event and variant ids match ^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$. A
// cardinality is {kind: "required"} (the default, [1,1]), {kind:
// "optional"} ([0,1]), {kind: "exact", count: n} (1 ≤ n ≤ 10000) or {kind:
// "range", min, max} (0 ≤ min ≤ max ≤ 10000, max ≥ 1). The partial_order
// members other than kind default to []; an unordered group and an
// unordered token list at least two events.
//
// Input above MaxTraceSpecBytes, invalid UTF-8, malformed JSON, duplicate
// member names, unpaired surrogate escapes and nesting deeper than
// evidence.MaxDepth (all invalid_json, at their path, read by the shared
// strict decoder) and unknown members are refused; then every rule is
// checked and each violation reported with its own code (the TraceCode
// constants) and JSON path: duplicate ids, inconsistent ignore sets,
// ignored fields in exact, overlapping predicates, unknown references,
// self edges, cycles, not-before conflicting with happens-before, repeated
// pairs, ordered-and-unordered pairs, event pairs neither ordered nor
// declared unordered, prefix/suffix order conflicting with happens-before,
// duplicate variant ids, duplicate variants and variants that violate
// cardinality. The error is an *Error with code CodeInvalidTraceSpec. It
// never panics.
func ParseTraceSpec(data []byte) (*TraceSpec, error) {
	fail := func(code, msg string) (*TraceSpec, error) {
		return nil, newError(CodeInvalidTraceSpec, []Issue{{Issue: strictjson.Issue{Path: "$", Code: code, Message: msg}}})
	}
	if len(data) > MaxTraceSpecBytes {
		return fail(TraceCodeTooLarge, fmt.Sprintf("trace spec is %d bytes; the limit is %d bytes", len(data), MaxTraceSpecBytes))
	}
	if !utf8.Valid(data) {
		return fail(TraceCodeInvalidUTF8, "trace spec is not valid UTF-8")
	}
	var decoded strictjson.Collector
	v := strictjson.Decode(data, "$", traceDecodeOptions, &decoded)
	if !decoded.Empty() {
		// Every document-level problem keeps the one code trace specs have
		// always given it; its path now says where it is.
		issues := make([]Issue, len(decoded.List))
		for i, is := range decoded.List {
			if is.Code != strictjson.CodeTooManyIssues {
				is.Code = TraceCodeInvalidJSON
			}
			issues[i] = Issue{Issue: is}
		}
		return nil, newError(CodeInvalidTraceSpec, issues)
	}
	p := &specParser{spec: &TraceSpec{byID: map[string]int{}, ignore: map[string]map[string]bool{}, index: map[string]map[string]int{}}}
	p.parse(v)
	if len(p.issues) > 0 {
		return nil, newError(CodeInvalidTraceSpec, p.issues)
	}
	raw, err := evidence.Canonicalize(data)
	if err != nil {
		return fail(TraceCodeInvalidJSON, strictjson.Truncate(err.Error(), 200))
	}
	p.spec.raw = raw
	return p.spec, nil
}

// traceDecodeOptions read a trace spec strictly: nesting as deep as
// evidence.Parse admits, no duplicate member names, no unpaired surrogate
// escapes, and numbers kept as written for the rules below to judge.
var traceDecodeOptions = strictjson.Options{
	MaxDepth:       evidence.MaxDepth,
	Surrogates:     true,
	LiteralNumbers: true,
	Wording:        strictjson.Wording{Detailed: true, Trailing: "data follows the JSON value at byte offset %d"},
}

type specParser struct {
	spec   *TraceSpec
	issues []Issue
	full   bool
}

func (p *specParser) add(path, code, format string, args ...any) {
	if p.full {
		return
	}
	if len(p.issues) == MaxTraceIssues-1 {
		p.issues = append(p.issues, Issue{Issue: strictjson.Issue{Path: "$", Code: TraceCodeTooManyIssues, Message: fmt.Sprintf("more than %d issues; the rest are not reported", MaxTraceIssues-1)}})
		p.full = true
		return
	}
	p.issues = append(p.issues, Issue{Issue: strictjson.Issue{Path: path, Code: code, Message: fmt.Sprintf(format, args...)}})
}

// object checks that v is an object with every required member and no
// member outside required and optional.
func (p *specParser) object(v *strictjson.Node, path string, required, optional []string) (strictjson.Members, bool) {
	m, ok := members(v)
	if !ok {
		p.add(path, TraceCodeWrongType, "must be an object, not %s", v.Kind)
		return nil, false
	}
	var unknown []string
	for k := range m {
		if !slices.Contains(required, k) && !slices.Contains(optional, k) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		p.add(path+keyPath(k), TraceCodeUnknownField, "unknown field %q", strictjson.Truncate(k, 64))
	}
	for _, k := range required {
		if _, ok := m[k]; !ok {
			p.add(path+"."+k, TraceCodeMissingField, "required field is missing")
		}
	}
	return m, true
}

// members returns the members of object v by name (the first of each name;
// Decode has refused any repeated one).
func members(v *strictjson.Node) (strictjson.Members, bool) {
	if v.Kind != strictjson.Object {
		return nil, false
	}
	m := make(strictjson.Members, len(v.Keys))
	for i, k := range v.Keys {
		if _, dup := m[k]; !dup {
			m[k] = v.Vals[i]
		}
	}
	return m, true
}

func (p *specParser) array(v *strictjson.Node, path string, min, max int) ([]*strictjson.Node, bool) {
	if v.Kind != strictjson.Array {
		p.add(path, TraceCodeWrongType, "must be an array, not %s", v.Kind)
		return nil, false
	}
	a := v.Elems
	if len(a) < min || len(a) > max {
		p.add(path, TraceCodeOutOfRange, "has %d items; allowed are %d–%d", len(a), min, max)
		return nil, false
	}
	return a, true
}

func (p *specParser) str(v *strictjson.Node, path string) (string, bool) {
	if v.Kind != strictjson.String {
		p.add(path, TraceCodeWrongType, "must be a string, not %s", v.Kind)
		return "", false
	}
	return v.Str, true
}

// nodeInteger is integer for a decoded number.
func nodeInteger(v *strictjson.Node) (int64, bool) {
	if v.Kind != strictjson.Number {
		return 0, false
	}
	return integer(json.Number(v.Str))
}

func (p *specParser) count(v *strictjson.Node, path string, min, max int) (int, bool) {
	n, ok := nodeInteger(v)
	if !ok {
		p.add(path, TraceCodeWrongType, "must be an integer, not %s", v.Kind)
		return 0, false
	}
	if n < int64(min) || n > int64(max) {
		p.add(path, TraceCodeOutOfRange, "%d is outside %d–%d", n, min, max)
		return 0, false
	}
	return int(n), true
}

// validID reports whether s matches ^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$.
func validID(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || !strings.ContainsRune("_.:-", rune(c))) {
			return false
		}
	}
	return true
}

func (p *specParser) id(v *strictjson.Node, path string) (string, bool) {
	s, ok := p.str(v, path)
	if !ok {
		return "", false
	}
	if !validID(s) {
		p.add(path, TraceCodeInvalidValue, "%q is not an id: 1–128 letters, digits, '_', '.', ':' or '-', starting with a letter or digit", strictjson.Truncate(s, 64))
		return "", false
	}
	return s, true
}

// ref resolves an event id reference.
func (p *specParser) ref(v *strictjson.Node, path string) (int, bool) {
	s, ok := p.str(v, path)
	if !ok {
		return 0, false
	}
	i, ok := p.spec.byID[s]
	if !ok {
		p.add(path, TraceCodeUnknownReference, "%q is not a declared event id", strictjson.Truncate(s, 64))
	}
	return i, ok
}

func (p *specParser) parse(v *strictjson.Node) {
	m, ok := p.object(v, "$", []string{"version", "events", "language"}, nil)
	if !ok {
		return
	}
	if ver, ok := m["version"]; ok {
		if n, isInt := nodeInteger(ver); !isInt || n != 1 {
			p.add("$.version", TraceCodeUnsupportedVersion, "version must be 1")
		}
	}
	eventsOK := false
	if ev, ok := m["events"]; ok {
		eventsOK = p.events(ev)
	}
	if lang, ok := m["language"]; ok && eventsOK {
		p.language(lang)
	}
}

// events parses the event declarations; it reports whether they are
// usable for checking the language (every id parsed and unique).
func (p *specParser) events(v *strictjson.Node) bool {
	const path = "$.events"
	items, ok := p.array(v, path, 1, MaxTraceEvents)
	if !ok {
		return false
	}
	usable := true
	ignoreAt := map[string]int{}  // source → first event declaring its ignore set
	seenExact := map[string]int{} // source + exact key → first event
	for i, it := range items {
		ip := indexPath(path, i)
		em, ok := p.object(it, ip, []string{"id", "source", "exact"}, []string{"ignore_fields", "cardinality"})
		ev := traceEvent{min: 1, max: 1}
		var exact map[string]any
		if ok {
			if idv, has := em["id"]; has {
				if id, good := p.id(idv, ip+".id"); good {
					ev.id = id
					if first, dup := p.spec.byID[id]; dup {
						p.add(ip+".id", TraceCodeDuplicateID, "event id %q is already declared at %s", id, indexPath(path, first))
						usable = false
					} else {
						p.spec.byID[id] = i
					}
				} else {
					usable = false
				}
			} else {
				usable = false
			}
			if sv, has := em["source"]; has {
				if s, good := p.str(sv, ip+".source"); good {
					if slices.Contains(traceSources, s) {
						ev.source = s
					} else {
						p.add(ip+".source", TraceCodeInvalidValue, "%q is not a source; sources are %s", strictjson.Truncate(s, 40), strings.Join(traceSources, ", "))
					}
				}
			}
			if xv, has := em["exact"]; has {
				if xv.Kind == strictjson.Object {
					exact = xv.Interface().(map[string]any) // the values journal records decode into
				} else {
					p.add(ip+".exact", TraceCodeWrongType, "must be an object (the exact payload), not %s", xv.Kind)
				}
			}
			ignore := p.ignoreFields(em, ip)
			for _, f := range ignore {
				if _, has := exact[f]; has {
					p.add(ip+".exact"+keyPath(f), TraceCodeIgnoredInExact, "%s is in ignore_fields, so exact must omit it", f)
				}
			}
			if ev.source != "" {
				set := map[string]bool{}
				for _, f := range ignore {
					set[f] = true
				}
				if prev, has := p.spec.ignore[ev.source]; !has {
					p.spec.ignore[ev.source] = set
					ignoreAt[ev.source] = i
				} else if !sameSet(prev, set) {
					p.add(ip+".ignore_fields", TraceCodeIgnoreMismatch,
						"every %s event must ignore the same fields as %s, the first %s event", ev.source, indexPath(path, ignoreAt[ev.source]), ev.source)
				}
				if exact != nil {
					key := canonKey(exact, nil)
					k := ev.source + "\x00" + key
					if first, dup := seenExact[k]; dup {
						p.add(ip+".exact", TraceCodeOverlapping, "matches exactly the same %s records as %s", ev.source, indexPath(path, first))
					} else {
						seenExact[k] = i
						if p.spec.index[ev.source] == nil {
							p.spec.index[ev.source] = map[string]int{}
						}
						p.spec.index[ev.source][key] = i
					}
				}
			}
			if cv, has := em["cardinality"]; has {
				ev.min, ev.max = p.cardinality(cv, ip+".cardinality")
			}
		} else {
			usable = false
		}
		p.spec.events = append(p.spec.events, ev)
	}
	return usable
}

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func (p *specParser) ignoreFields(em strictjson.Members, ip string) []string {
	v, has := em["ignore_fields"]
	if !has {
		return nil
	}
	path := ip + ".ignore_fields"
	items, ok := p.array(v, path, 0, len(ignorableFields))
	if !ok {
		return nil
	}
	var out []string
	for j, it := range items {
		s, ok := p.str(it, indexPath(path, j))
		if !ok {
			continue
		}
		switch {
		case !slices.Contains(ignorableFields, s):
			p.add(indexPath(path, j), TraceCodeInvalidValue, "%q cannot be ignored; ignorable fields are %s", strictjson.Truncate(s, 40), strings.Join(ignorableFields, ", "))
		case slices.Contains(out, s):
			p.add(indexPath(path, j), TraceCodeInvalidValue, "%s is listed twice", s)
		default:
			out = append(out, s)
		}
	}
	return out
}

func (p *specParser) cardinality(v *strictjson.Node, path string) (int, int) {
	m, ok := members(v)
	if !ok {
		p.add(path, TraceCodeWrongType, "must be an object, not %s", v.Kind)
		return 1, 1
	}
	kv, has := m["kind"]
	if !has {
		p.add(path+".kind", TraceCodeMissingField, "required field is missing")
		return 1, 1
	}
	kind, ok := p.str(kv, path+".kind")
	if !ok {
		return 1, 1
	}
	switch kind {
	case "required":
		p.object(v, path, []string{"kind"}, nil)
		return 1, 1
	case "optional":
		p.object(v, path, []string{"kind"}, nil)
		return 0, 1
	case "exact":
		p.object(v, path, []string{"kind", "count"}, nil)
		if c, has := m["count"]; has {
			if n, ok := p.count(c, path+".count", 1, MaxCardinality); ok {
				return n, n
			}
		}
		return 1, 1
	case "range":
		p.object(v, path, []string{"kind", "min", "max"}, nil)
		lo, okL := 0, false
		hi, okH := 0, false
		if c, has := m["min"]; has {
			lo, okL = p.count(c, path+".min", 0, MaxCardinality)
		}
		if c, has := m["max"]; has {
			hi, okH = p.count(c, path+".max", 1, MaxCardinality)
		}
		if okL && okH {
			if lo > hi {
				p.add(path, TraceCodeInvalidValue, "min %d is greater than max %d", lo, hi)
				return 1, 1
			}
			return lo, hi
		}
		return 1, 1
	}
	p.add(path+".kind", TraceCodeInvalidValue, "%q is not a cardinality; use required, optional, exact or range", strictjson.Truncate(kind, 40))
	return 1, 1
}

func (p *specParser) language(v *strictjson.Node) {
	const path = "$.language"
	m, ok := members(v)
	if !ok {
		p.add(path, TraceCodeWrongType, "must be an object, not %s", v.Kind)
		return
	}
	kv, has := m["kind"]
	if !has {
		p.add(path+".kind", TraceCodeMissingField, "required field is missing")
		return
	}
	kind, ok := p.str(kv, path+".kind")
	if !ok {
		return
	}
	switch kind {
	case LanguagePartialOrder:
		p.spec.lang = kind
		if _, ok := p.object(v, path, []string{"kind"}, []string{"happens_before", "not_before", "unordered_groups", "prefix", "suffix"}); ok {
			p.partialOrder(m)
		}
	case LanguageFiniteTraces:
		p.spec.lang = kind
		if _, ok := p.object(v, path, []string{"kind", "variants"}, nil); ok {
			if vs, has := m["variants"]; has {
				p.finiteTraces(vs)
			}
		}
	default:
		p.add(path+".kind", TraceCodeInvalidValue, "%q is not a language; use partial_order or finite_traces", strictjson.Truncate(kind, 40))
	}
}

// pairs parses a list of {a, b} reference objects.
func (p *specParser) pairs(v *strictjson.Node, path, a, b string) []pair {
	items, ok := p.array(v, path, 0, MaxTraceEvents*MaxTraceEvents)
	if !ok {
		return nil
	}
	var out []pair
	seen := map[pair]int{}
	for i, it := range items {
		ip := indexPath(path, i)
		m, ok := p.object(it, ip, []string{a, b}, nil)
		if !ok {
			continue
		}
		av, okA := m[a]
		bv, okB := m[b]
		if !okA || !okB {
			continue
		}
		x, okX := p.ref(av, ip+"."+a)
		y, okY := p.ref(bv, ip+"."+b)
		if !okX || !okY {
			continue
		}
		if x == y {
			p.add(ip, TraceCodeSelfEdge, "relates %q to itself", p.spec.events[x].id)
			continue
		}
		pr := pair{x, y}
		if first, dup := seen[pr]; dup {
			p.add(ip, TraceCodeRepeatedPair, "repeats %s", indexPath(path, first))
			continue
		}
		seen[pr] = i
		out = append(out, pr)
	}
	return out
}

// refs parses a list of event references.
func (p *specParser) refs(v *strictjson.Node, path string, min, max int) ([]int, bool) {
	items, ok := p.array(v, path, min, max)
	if !ok {
		return nil, false
	}
	out := make([]int, 0, len(items))
	good := true
	for i, it := range items {
		x, ok := p.ref(it, indexPath(path, i))
		if !ok {
			good = false
			continue
		}
		out = append(out, x)
	}
	return out, good
}

// bitset is a set of event indexes (at most MaxTraceEvents).
type bitset [MaxTraceEvents / 64]uint64

func (b *bitset) set(i int)      { b[i/64] |= 1 << (i % 64) }
func (b *bitset) has(i int) bool { return b[i/64]&(1<<(i%64)) != 0 }
func (b *bitset) or(o *bitset) {
	for k := range b {
		b[k] |= o[k]
	}
}

func (p *specParser) partialOrder(m strictjson.Members) {
	const path = "$.language"
	s := p.spec
	n := len(s.events)
	if v, ok := m["happens_before"]; ok {
		s.hb = p.pairs(v, path+".happens_before", "before", "after")
	}
	// Transitive closure (reach[i] = events after i) by depth-first
	// search from every event, with cycle detection.
	succ := make([][]int, n)
	for _, e := range s.hb {
		succ[e.a] = append(succ[e.a], e.b)
	}
	reach := make([]bitset, n)
	state := make([]uint8, n) // 0 new, 1 on stack, 2 done
	var cycle []int
	var stack []int
	var visit func(i int)
	visit = func(i int) {
		state[i] = 1
		stack = append(stack, i)
		for _, j := range succ[i] {
			switch state[j] {
			case 0:
				visit(j)
			case 1:
				if cycle == nil {
					k := slices.Index(stack, j)
					cycle = append(slices.Clone(stack[k:]), j)
				}
			}
			reach[i].set(j)
			reach[i].or(&reach[j])
		}
		stack = stack[:len(stack)-1]
		state[i] = 2
	}
	for i := range n {
		if state[i] == 0 {
			visit(i)
		}
	}
	if cycle != nil {
		ids := make([]string, len(cycle))
		for k, c := range cycle {
			ids[k] = s.events[c].id
		}
		p.add(path+".happens_before", TraceCodeCycle, "happens_before has a cycle: %s", strings.Join(ids, " → "))
		return // ordering questions have no answer on a cycle
	}
	ordered := func(a, b int) bool { return reach[a].has(b) || reach[b].has(a) }
	if v, ok := m["not_before"]; ok {
		s.notBefore = p.pairs(v, path+".not_before", "event", "anchor")
		for i, nb := range s.notBefore {
			if reach[nb.a].has(nb.b) {
				p.add(indexPath(path+".not_before", i), TraceCodeNotBeforeConflict,
					"%q happens before %q, so it can never be not-before it", s.events[nb.a].id, s.events[nb.b].id)
			}
		}
	}
	unordered := make([]bitset, n)
	if v, ok := m["unordered_groups"]; ok {
		gp := path + ".unordered_groups"
		if items, ok := p.array(v, gp, 0, MaxTraceEvents*MaxTraceEvents); ok {
			where := map[pair]string{}
			for gi, it := range items {
				ip := indexPath(gp, gi)
				gm, ok := p.object(it, ip, []string{"events"}, nil)
				if !ok {
					continue
				}
				ev, has := gm["events"]
				if !has {
					continue
				}
				group, ok := p.refs(ev, ip+".events", 2, MaxTraceEvents)
				if !ok {
					continue
				}
				for x := 0; x < len(group); x++ {
					for y := x + 1; y < len(group); y++ {
						a, b := min(group[x], group[y]), max(group[x], group[y])
						at := indexPath(ip+".events", y)
						switch {
						case a == b:
							p.add(at, TraceCodeRepeatedPair, "%q is listed twice in this group", s.events[a].id)
						case where[pair{a, b}] != "":
							p.add(at, TraceCodeRepeatedPair, "%q and %q are already declared unordered at %s", s.events[a].id, s.events[b].id, where[pair{a, b}])
						case ordered(a, b):
							p.add(at, TraceCodeOrderedAndUnordered, "%q and %q are ordered by happens_before and declared unordered", s.events[a].id, s.events[b].id)
						default:
							where[pair{a, b}] = ip
							unordered[a].set(b)
							unordered[b].set(a)
						}
					}
				}
				s.groups = append(s.groups, group)
			}
		}
	}
	for a := range n {
		for b := a + 1; b < n; b++ {
			if !ordered(a, b) && !unordered[a].has(b) {
				p.add(path, TraceCodeUnrelatedPair,
					"%q and %q are neither ordered by happens_before (even transitively) nor declared unordered", s.events[a].id, s.events[b].id)
			}
		}
	}
	s.prefix = p.anchored(m, "prefix", reach)
	s.suffix = p.anchored(m, "suffix", reach)
}

// anchored parses prefix or suffix: references whose order agrees with
// happens_before and whose counts fit the cardinalities.
func (p *specParser) anchored(m strictjson.Members, name string, reach []bitset) []int {
	v, ok := m[name]
	if !ok {
		return nil
	}
	path := "$.language." + name
	code := TraceCodePrefixConflict
	if name == "suffix" {
		code = TraceCodeSuffixConflict
	}
	list, ok := p.refs(v, path, 0, MaxTraceEvents*MaxCardinality)
	if !ok {
		return nil
	}
	s := p.spec
	counts := map[int]int{}
	for i, x := range list {
		counts[x]++
		if counts[x] == s.events[x].max+1 {
			p.add(indexPath(path, i), code, "lists %q more often than its cardinality allows (%d)", s.events[x].id, s.events[x].max)
		}
		for j := i + 1; j < len(list); j++ {
			if reach[list[j]].has(x) {
				p.add(indexPath(path, j), code, "%q comes after %q here, but happens_before puts it first", s.events[list[j]].id, s.events[x].id)
			}
		}
	}
	return list
}

func (p *specParser) finiteTraces(v *strictjson.Node) {
	const path = "$.language.variants"
	items, ok := p.array(v, path, 1, MaxTraceVariants)
	if !ok {
		return
	}
	s := p.spec
	ids := map[string]int{}
	shapes := map[string]int{}
	for i, it := range items {
		ip := indexPath(path, i)
		vm, ok := p.object(it, ip, []string{"id", "trace"}, nil)
		if !ok {
			continue
		}
		var va variant
		if idv, has := vm["id"]; has {
			if id, good := p.id(idv, ip+".id"); good {
				if first, dup := ids[id]; dup {
					p.add(ip+".id", TraceCodeDuplicateVariantID, "variant id %q is already used at %s", id, indexPath(path, first))
				} else {
					ids[id] = i
				}
				va.id = id
			}
		}
		tv, has := vm["trace"]
		if !has {
			continue
		}
		tp := ip + ".trace"
		toks, ok := p.array(tv, tp, 0, MaxTraceEvents*MaxCardinality)
		if !ok {
			continue
		}
		good := true
		counts := make([]int, len(s.events))
		for j, tk := range toks {
			jp := indexPath(tp, j)
			if tk.Kind == strictjson.Object {
				um, _ := p.object(tk, jp, []string{"unordered"}, nil)
				uv, has := um["unordered"]
				if !has {
					good = false
					continue
				}
				group, ok := p.refs(uv, jp+".unordered", 2, MaxTraceEvents*MaxCardinality)
				if !ok {
					good = false
					continue
				}
				for _, x := range group {
					counts[x]++
				}
				va.tokens = append(va.tokens, token{event: -1, unordered: group})
				continue
			}
			x, ok := p.ref(tk, jp)
			if !ok {
				good = false
				continue
			}
			counts[x]++
			va.tokens = append(va.tokens, token{event: x})
		}
		if !good {
			continue
		}
		for x, c := range counts {
			if e := s.events[x]; c < e.min || c > e.max {
				p.add(tp, TraceCodeVariantCardinality, "has %q %d times; its cardinality allows %s", e.id, c, cardText(e.min, e.max))
			}
		}
		shape := variantShape(va)
		if first, dup := shapes[shape]; dup {
			p.add(ip, TraceCodeDuplicateVariant, "accepts exactly the same traces as %s", indexPath(path, first))
		} else {
			shapes[shape] = i
		}
		s.variants = append(s.variants, va)
	}
}

// variantShape is a key equal for variants that accept the same traces
// token by token (an unordered token's events sorted).
func variantShape(v variant) string {
	var b strings.Builder
	for _, t := range v.tokens {
		if t.unordered == nil {
			b.WriteString(strconv.Itoa(t.event))
		} else {
			u := slices.Clone(t.unordered)
			slices.Sort(u)
			b.WriteString("{")
			for _, x := range u {
				b.WriteString(strconv.Itoa(x))
				b.WriteString(" ")
			}
			b.WriteString("}")
		}
		b.WriteString(",")
	}
	return b.String()
}

func cardText(lo, hi int) string {
	if lo == hi {
		return fmt.Sprintf("exactly %d", lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}
