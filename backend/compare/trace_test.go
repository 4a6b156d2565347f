package compare

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/backend/evidence"
)

// Events of the base record: "hello" printed at 5 ms, input "x\r" at 20 ms.
const (
	evHello = `{"id":"hello","source":"terminal_raw","exact":{"data":"hello"},"ignore_fields":["sequence","at_ms"]}`
	evInput = `{"id":"input","source":"interaction","exact":{"type":"input","data":"x\r","outcome":"dispatched"},` +
		`"ignore_fields":["sequence","scheduled_at_ms","dispatched_at_ms"]}`
	evExit    = `{"id":"exit","source":"lifecycle","exact":{"event":"exit","code":0,"signal":null,"reason":"exited"},"ignore_fields":["elapsed_ms"]}`
	evSettled = `{"id":"settled","source":"lifecycle","exact":{"event":"settlement","state":"quiesced","cleanup_outcome":"not_required"},"ignore_fields":["elapsed_ms"]}`
)

func spec(events, language string) string {
	return `{"version":1,"events":[` + events + `],"language":` + language + `}`
}

var helloThenInput = spec(evHello+","+evInput, `{"kind":"partial_order","happens_before":[{"before":"hello","after":"input"}]}`)

func mustSpec(t *testing.T, s string) *TraceSpec {
	t.Helper()
	ts, err := ParseTraceSpec([]byte(s))
	if err != nil {
		t.Fatalf("ParseTraceSpec(%s): %v", s, err)
	}
	return ts
}

func wantRejected(t *testing.T, s, code, path string) {
	t.Helper()
	_, err := ParseTraceSpec([]byte(s))
	var ce *Error
	if !errors.As(err, &ce) || ce.Code != CodeInvalidTraceSpec {
		t.Fatalf("ParseTraceSpec(%s) = %v, want %s", s, err, CodeInvalidTraceSpec)
	}
	for _, is := range ce.Issues {
		if is.Code == code && (path == "" || is.Path == path) {
			if is.Message == "" {
				t.Errorf("issue without message: %+v", is)
			}
			return
		}
	}
	t.Errorf("ParseTraceSpec(%s): issues %v, want %s at %s", s, ce.Issues, code, path)
}

func TestParseTraceSpecAccepts(t *testing.T) {
	ts := mustSpec(t, helloThenInput)
	if ts.Language() != LanguagePartialOrder || strings.Join(ts.EventIDs(), ",") != "hello,input" {
		t.Errorf("spec = %+v", ts)
	}
	mustSpec(t, spec(evHello+","+evInput, `{"kind":"finite_traces","variants":[{"id":"a","trace":["hello","input"]},{"id":"b","trace":[{"unordered":["hello","input"]}]}]}`))
	mustSpec(t, spec(evHello, `{"kind":"partial_order"}`)) // one event: nothing to relate
	mustSpec(t, spec(`{"id":"a","source":"shim","exact":{"command":"git"},"cardinality":{"kind":"range","min":0,"max":10000}},`+
		`{"id":"b","source":"shim","exact":{"command":"hg"},"cardinality":{"kind":"exact","count":3}},`+
		`{"id":"c","source":"http","exact":{"path":"/"},"cardinality":{"kind":"optional"}}`,
		`{"kind":"partial_order","happens_before":[{"before":"a","after":"b"}],"unordered_groups":[{"events":["a","c"]},{"events":["b","c"]}],"not_before":[{"event":"c","anchor":"a"}],"prefix":["a"],"suffix":["b"]}`))
	// 256 events in a chain: the limit.
	var evs, edges []string
	for i := range MaxTraceEvents {
		evs = append(evs, `{"id":"e`+itoa(i)+`","source":"terminal_raw","exact":{"data":"`+itoa(i)+`"}}`)
		if i > 0 {
			edges = append(edges, `{"before":"e`+itoa(i-1)+`","after":"e`+itoa(i)+`"}`)
		}
	}
	mustSpec(t, spec(strings.Join(evs, ","), `{"kind":"partial_order","happens_before":[`+strings.Join(edges, ",")+`]}`))
	evs = append(evs, `{"id":"extra","source":"shim","exact":{}}`)
	wantRejected(t, spec(strings.Join(evs, ","), `{"kind":"partial_order"}`), TraceCodeOutOfRange, "$.events")
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestParseTraceSpecRejectsEachRule(t *testing.T) {
	po := func(body string) string { return `{"kind":"partial_order"` + body + `}` }
	two := evHello + "," + evInput
	cases := []struct {
		name, spec, code, path string
	}{
		{"not json", `{"version":1`, TraceCodeInvalidJSON, "$"},
		{"duplicate member", `{"version":1,"version":1,"events":[],"language":{}}`, TraceCodeInvalidJSON, "$.version"},
		{"unpaired surrogate", `{"version":1,"events":[{"id":"x","source":"shim","exact":{"a":"\ud800"}}],"language":{"kind":"partial_order"}}`, TraceCodeInvalidJSON, "$.events[0].exact.a"},
		{"repeated member below", `{"version":1,"events":[{"id":"x","source":"shim","exact":{"a":1,"\u0061":2}}],"language":{"kind":"partial_order"}}`, TraceCodeInvalidJSON, "$.events[0].exact.a"},
		{"invalid utf-8", "{\"version\":1,\"x\":\"\xff\"}", TraceCodeInvalidUTF8, "$"},
		{"not an object", `[]`, TraceCodeWrongType, "$"},
		{"unknown top field", `{"version":1,"events":[` + evHello + `],"language":{"kind":"partial_order"},"extra":1}`, TraceCodeUnknownField, "$.extra"},
		{"missing language", `{"version":1,"events":[` + evHello + `]}`, TraceCodeMissingField, "$.language"},
		{"version 2", `{"version":2,"events":[` + evHello + `],"language":{"kind":"partial_order"}}`, TraceCodeUnsupportedVersion, "$.version"},
		{"no events", spec(``, po(``)), TraceCodeOutOfRange, "$.events"},
		{"bad id", spec(`{"id":"-x","source":"shim","exact":{}}`, po(``)), TraceCodeInvalidValue, "$.events[0].id"},
		{"bad source", spec(`{"id":"x","source":"stdout","exact":{}}`, po(``)), TraceCodeInvalidValue, "$.events[0].source"},
		{"exact not object", spec(`{"id":"x","source":"shim","exact":"git"}`, po(``)), TraceCodeWrongType, "$.events[0].exact"},
		{"unknown event field", spec(`{"id":"x","source":"shim","exact":{},"optional":true}`, po(``)), TraceCodeUnknownField, "$.events[0].optional"},
		{"duplicate id", spec(evHello+`,{"id":"hello","source":"shim","exact":{}}`, po(``)), TraceCodeDuplicateID, "$.events[1].id"},
		{"unknown ignore field", spec(`{"id":"x","source":"shim","exact":{},"ignore_fields":["command"]}`, po(``)), TraceCodeInvalidValue, "$.events[0].ignore_fields[0]"},
		{"repeated ignore field", spec(`{"id":"x","source":"shim","exact":{},"ignore_fields":["at_ms","at_ms"]}`, po(``)), TraceCodeInvalidValue, "$.events[0].ignore_fields[1]"},
		{"inconsistent ignore", spec(evHello+`,{"id":"b","source":"terminal_raw","exact":{"data":"b"},"ignore_fields":["at_ms"]}`, po(`,"unordered_groups":[{"events":["hello","b"]}]`)),
			TraceCodeIgnoreMismatch, "$.events[1].ignore_fields"},
		{"ignored field in exact", spec(`{"id":"x","source":"shim","exact":{"at_ms":3},"ignore_fields":["at_ms"]}`, po(``)), TraceCodeIgnoredInExact, "$.events[0].exact.at_ms"},
		{"overlapping", spec(evHello+`,{"id":"again","source":"terminal_raw","exact":{"data":"hello"},"ignore_fields":["at_ms","sequence"]}`, po(`,"unordered_groups":[{"events":["hello","again"]}]`)),
			TraceCodeOverlapping, "$.events[1].exact"},
		{"bad cardinality kind", spec(`{"id":"x","source":"shim","exact":{},"cardinality":{"kind":"many"}}`, po(``)), TraceCodeInvalidValue, "$.events[0].cardinality.kind"},
		{"exact zero", spec(`{"id":"x","source":"shim","exact":{},"cardinality":{"kind":"exact","count":0}}`, po(``)), TraceCodeOutOfRange, "$.events[0].cardinality.count"},
		{"range too large", spec(`{"id":"x","source":"shim","exact":{},"cardinality":{"kind":"range","min":0,"max":10001}}`, po(``)), TraceCodeOutOfRange, "$.events[0].cardinality.max"},
		{"range inverted", spec(`{"id":"x","source":"shim","exact":{},"cardinality":{"kind":"range","min":3,"max":2}}`, po(``)), TraceCodeInvalidValue, "$.events[0].cardinality"},
		{"cardinality extra field", spec(`{"id":"x","source":"shim","exact":{},"cardinality":{"kind":"required","count":1}}`, po(``)), TraceCodeUnknownField, "$.events[0].cardinality.count"},
		{"bad language", spec(evHello, `{"kind":"regex"}`), TraceCodeInvalidValue, "$.language.kind"},
		{"language extra field", spec(evHello, `{"kind":"partial_order","variants":[]}`), TraceCodeUnknownField, "$.language.variants"},
		{"unknown reference", spec(two, po(`,"happens_before":[{"before":"hello","after":"nope"}]`)), TraceCodeUnknownReference, "$.language.happens_before[0].after"},
		{"self edge", spec(two, po(`,"happens_before":[{"before":"hello","after":"hello"},{"before":"hello","after":"input"}]`)), TraceCodeSelfEdge, "$.language.happens_before[0]"},
		{"cycle", spec(two, po(`,"happens_before":[{"before":"hello","after":"input"},{"before":"input","after":"hello"}]`)), TraceCodeCycle, "$.language.happens_before"},
		{"not_before conflict", spec(two, po(`,"happens_before":[{"before":"hello","after":"input"}],"not_before":[{"event":"hello","anchor":"input"}]`)),
			TraceCodeNotBeforeConflict, "$.language.not_before[0]"},
		{"not_before self", spec(two, po(`,"happens_before":[{"before":"hello","after":"input"}],"not_before":[{"event":"input","anchor":"input"}]`)),
			TraceCodeSelfEdge, "$.language.not_before[0]"},
		{"repeated edge", spec(two, po(`,"happens_before":[{"before":"hello","after":"input"},{"before":"hello","after":"input"}]`)), TraceCodeRepeatedPair, "$.language.happens_before[1]"},
		{"repeated unordered", spec(two, po(`,"unordered_groups":[{"events":["hello","input"]},{"events":["input","hello"]}]`)), TraceCodeRepeatedPair, "$.language.unordered_groups[1].events[1]"},
		{"repeated in group", spec(two, po(`,"unordered_groups":[{"events":["hello","input","hello"]}]`)), TraceCodeRepeatedPair, "$.language.unordered_groups[0].events[2]"},
		{"ordered and unordered", spec(two, po(`,"happens_before":[{"before":"hello","after":"input"}],"unordered_groups":[{"events":["hello","input"]}]`)),
			TraceCodeOrderedAndUnordered, "$.language.unordered_groups[0].events[1]"},
		{"transitively ordered and unordered", spec(two+`,`+evExit, po(`,"happens_before":[{"before":"hello","after":"input"},{"before":"input","after":"exit"}],"unordered_groups":[{"events":["hello","exit"]}]`)),
			TraceCodeOrderedAndUnordered, "$.language.unordered_groups[0].events[1]"},
		{"unrelated pair", spec(two, po(``)), TraceCodeUnrelatedPair, "$.language"},
		{"group of one", spec(two, po(`,"unordered_groups":[{"events":["hello"]}]`)), TraceCodeOutOfRange, "$.language.unordered_groups[0].events"},
		{"prefix conflict", spec(two, po(`,"happens_before":[{"before":"hello","after":"input"}],"prefix":["input","hello"]`)), TraceCodePrefixConflict, "$.language.prefix[1]"},
		{"prefix over cardinality", spec(two, po(`,"happens_before":[{"before":"hello","after":"input"}],"prefix":["hello","hello"]`)), TraceCodePrefixConflict, "$.language.prefix[1]"},
		{"suffix conflict", spec(two, po(`,"happens_before":[{"before":"hello","after":"input"}],"suffix":["input","hello"]`)), TraceCodeSuffixConflict, "$.language.suffix[1]"},
		{"suffix unknown", spec(two, po(`,"happens_before":[{"before":"hello","after":"input"}],"suffix":["bye"]`)), TraceCodeUnknownReference, "$.language.suffix[0]"},
		{"no variants", spec(two, `{"kind":"finite_traces","variants":[]}`), TraceCodeOutOfRange, "$.language.variants"},
		{"duplicate variant id", spec(two, `{"kind":"finite_traces","variants":[{"id":"a","trace":["hello","input"]},{"id":"a","trace":["input","hello"]}]}`),
			TraceCodeDuplicateVariantID, "$.language.variants[1].id"},
		{"duplicate variant", spec(two, `{"kind":"finite_traces","variants":[{"id":"a","trace":[{"unordered":["hello","input"]}]},{"id":"b","trace":[{"unordered":["input","hello"]}]}]}`),
			TraceCodeDuplicateVariant, "$.language.variants[1]"},
		{"variant cardinality", spec(two, `{"kind":"finite_traces","variants":[{"id":"a","trace":["hello"]}]}`), TraceCodeVariantCardinality, "$.language.variants[0].trace"},
		{"variant too many", spec(two, `{"kind":"finite_traces","variants":[{"id":"a","trace":["hello","input","hello"]}]}`), TraceCodeVariantCardinality, "$.language.variants[0].trace"},
		{"variant unknown event", spec(two, `{"kind":"finite_traces","variants":[{"id":"a","trace":["hello","input","bye"]}]}`), TraceCodeUnknownReference, "$.language.variants[0].trace[2]"},
		{"variant bad token", spec(two, `{"kind":"finite_traces","variants":[{"id":"a","trace":["hello",{"sorted":["input"]}]}]}`), TraceCodeUnknownField, "$.language.variants[0].trace[1].sorted"},
		{"variant token without unordered", spec(two, `{"kind":"finite_traces","variants":[{"id":"a","trace":[{}]}]}`), TraceCodeMissingField, "$.language.variants[0].trace[0].unordered"},
		{"unordered token of one", spec(two, `{"kind":"finite_traces","variants":[{"id":"a","trace":["hello",{"unordered":["input"]}]}]}`), TraceCodeOutOfRange, "$.language.variants[0].trace[1].unordered"},
		{"events not an array", `{"version":1,"events":{},"language":{"kind":"partial_order"}}`, TraceCodeWrongType, "$.events"},
		{"id not a string", spec(`{"id":7,"source":"shim","exact":{}}`, po(``)), TraceCodeWrongType, "$.events[0].id"},
		{"event not an object", spec(`"hello"`, po(``)), TraceCodeWrongType, "$.events[0]"},
		{"missing exact", spec(`{"id":"x","source":"shim"}`, po(``)), TraceCodeMissingField, "$.events[0].exact"},
		{"cardinality not an object", spec(`{"id":"x","source":"shim","exact":{},"cardinality":"required"}`, po(``)), TraceCodeWrongType, "$.events[0].cardinality"},
		{"cardinality without kind", spec(`{"id":"x","source":"shim","exact":{},"cardinality":{"count":2}}`, po(``)), TraceCodeMissingField, "$.events[0].cardinality.kind"},
		{"count not an integer", spec(`{"id":"x","source":"shim","exact":{},"cardinality":{"kind":"exact","count":"2"}}`, po(``)), TraceCodeWrongType, "$.events[0].cardinality.count"},
		{"count fractional", spec(`{"id":"x","source":"shim","exact":{},"cardinality":{"kind":"exact","count":1.5}}`, po(``)), TraceCodeWrongType, "$.events[0].cardinality.count"},
		{"range missing max", spec(`{"id":"x","source":"shim","exact":{},"cardinality":{"kind":"range","min":0}}`, po(``)), TraceCodeMissingField, "$.events[0].cardinality.max"},
		{"language not an object", spec(evHello, `"partial_order"`), TraceCodeWrongType, "$.language"},
		{"language without kind", spec(evHello, `{"happens_before":[]}`), TraceCodeMissingField, "$.language.kind"},
		{"language kind not a string", spec(evHello, `{"kind":1}`), TraceCodeWrongType, "$.language.kind"},
		{"finite_traces without variants", spec(evHello, `{"kind":"finite_traces"}`), TraceCodeMissingField, "$.language.variants"},
		{"happens_before not an array", spec(two, po(`,"happens_before":{"before":"hello","after":"input"}`)), TraceCodeWrongType, "$.language.happens_before"},
		{"edge missing after", spec(two, po(`,"happens_before":[{"before":"hello"}]`)), TraceCodeMissingField, "$.language.happens_before[0].after"},
		{"not_before unknown anchor", spec(two, po(`,"happens_before":[{"before":"hello","after":"input"}],"not_before":[{"event":"input","anchor":"nope"}]`)),
			TraceCodeUnknownReference, "$.language.not_before[0].anchor"},
		{"repeated not_before", spec(two, po(`,"unordered_groups":[{"events":["hello","input"]}],"not_before":[{"event":"input","anchor":"hello"},{"event":"input","anchor":"hello"}]`)),
			TraceCodeRepeatedPair, "$.language.not_before[1]"},
		{"group unknown event", spec(two, po(`,"unordered_groups":[{"events":["hello","nope"]}]`)), TraceCodeUnknownReference, "$.language.unordered_groups[0].events[1]"},
		{"prefix unknown", spec(two, po(`,"happens_before":[{"before":"hello","after":"input"}],"prefix":["bye"]`)), TraceCodeUnknownReference, "$.language.prefix[0]"},
		{"suffix over cardinality", spec(two, po(`,"happens_before":[{"before":"hello","after":"input"}],"suffix":["input","input"]`)), TraceCodeSuffixConflict, "$.language.suffix[1]"},
		{"bad variant id", spec(two, `{"kind":"finite_traces","variants":[{"id":"","trace":["hello","input"]}]}`), TraceCodeInvalidValue, "$.language.variants[0].id"},
		{"variant cardinality in unordered token", spec(two, `{"kind":"finite_traces","variants":[{"id":"a","trace":[{"unordered":["hello","hello"]},"input"]}]}`),
			TraceCodeVariantCardinality, "$.language.variants[0].trace"},
		{"version not a number", `{"version":"1","events":[` + evHello + `],"language":{"kind":"partial_order"}}`, TraceCodeUnsupportedVersion, "$.version"},
	}
	covered := map[string]bool{TraceCodeTooLarge: true, TraceCodeTooManyIssues: true} // TestParseTraceSpecBoundsIssues
	for _, tc := range cases {
		covered[tc.code] = true
		t.Run(tc.name, func(t *testing.T) { wantRejected(t, tc.spec, tc.code, tc.path) })
	}
	big := make([]byte, MaxTraceSpecBytes+1)
	wantRejected(t, string(big), TraceCodeTooLarge, "$")
	// Every rejection code of trace.go has at least one case here.
	for _, code := range []string{TraceCodeTooLarge, TraceCodeInvalidUTF8, TraceCodeInvalidJSON, TraceCodeUnknownField, TraceCodeMissingField,
		TraceCodeWrongType, TraceCodeInvalidValue, TraceCodeOutOfRange, TraceCodeUnsupportedVersion, TraceCodeDuplicateID, TraceCodeIgnoreMismatch,
		TraceCodeIgnoredInExact, TraceCodeOverlapping, TraceCodeUnknownReference, TraceCodeSelfEdge, TraceCodeCycle, TraceCodeNotBeforeConflict,
		TraceCodeRepeatedPair, TraceCodeOrderedAndUnordered, TraceCodeUnrelatedPair, TraceCodePrefixConflict, TraceCodeSuffixConflict,
		TraceCodeDuplicateVariantID, TraceCodeDuplicateVariant, TraceCodeVariantCardinality, TraceCodeTooManyIssues} {
		if !covered[code] {
			t.Errorf("no rejection case for %s", code)
		}
	}
}

func TestParseTraceSpecBoundsIssues(t *testing.T) {
	var evs []string
	for i := range 100 {
		evs = append(evs, `{"id":"e`+itoa(i)+`","source":"shim","exact":{"n":`+itoa(i)+`}}`)
	}
	_, err := ParseTraceSpec([]byte(spec(strings.Join(evs, ","), `{"kind":"partial_order"}`))) // 4950 unrelated pairs
	var ce *Error
	if !errors.As(err, &ce) || len(ce.Issues) != MaxTraceIssues || ce.Issues[MaxTraceIssues-1].Code != TraceCodeTooManyIssues {
		t.Fatalf("error = %v", err)
	}
}

// compareTrace compares two records with a trace spec.
func compareTrace(t *testing.T, l, r obj, specJSON string) Result {
	t.Helper()
	return mustCompare(t, env(t, l), env(t, r), Options{Mode: ModeExact, Trace: mustSpec(t, specJSON)})
}

func TestTraceEquivalent(t *testing.T) {
	res := compareTrace(t, baseRecord(), baseRecord(), helloThenInput)
	tr := res.Trace
	if tr == nil || tr.Verdict != VerdictEquivalent || tr.Diagnostic != nil {
		t.Fatalf("trace = %+v", tr)
	}
	for _, side := range []TraceSide{tr.Left, tr.Right} {
		if side.Status != SidePass || side.SatisfiedConstraints == nil || side.MatchedVariant != nil {
			t.Errorf("side = %+v", side)
		}
		if len(side.Trace) != 2 || side.Trace[0].EventID != "hello" || side.Trace[0].Location != root+".frames[0]" ||
			side.Trace[1].Location != root+".interaction_events[0]" || side.Trace[0].CaptureOrder >= side.Trace[1].CaptureOrder {
			t.Errorf("trace = %+v", side.Trace)
		}
		c := side.SatisfiedConstraints
		if len(c.HappensBefore) != 1 || c.HappensBefore[0] != (BeforeAfter{"hello", "input"}) || len(c.Cardinality) != 2 {
			t.Errorf("constraints = %+v", c)
		}
	}
	// The Evidence uses the trace predicate and records the spec.
	l := env(t, baseRecord())
	e, err := Envelope(res, l, l)
	if err != nil {
		t.Fatal(err)
	}
	if e.PredicateType != evidence.PredicateProcessComparisonTrace {
		t.Errorf("predicate = %s", e.PredicateType)
	}
	var params struct {
		TraceSpec json.RawMessage `json:"trace_spec"`
	}
	json.Unmarshal(e.Parameters, &params)
	if d1, _ := evidence.DigestJSON(params.TraceSpec); d1 != mustDigest(t, helloThenInput) {
		t.Errorf("parameters.trace_spec = %s", params.TraceSpec)
	}
	var norm map[string]any
	json.Unmarshal(e.NormalizedResult, &norm)
	if _, ok := norm["trace"].(map[string]any); !ok {
		t.Errorf("normalized_result.trace = %v", norm["trace"])
	}
}

func mustDigest(t *testing.T, s string) string {
	d, err := evidence.DigestJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// inputFirst is the base record with the input dispatched before "hello".
func inputFirst() obj {
	r := baseRecord()
	r["interaction_events"] = arr{interaction(0, 2, "x\r")}
	return r
}

func TestTraceDifferent(t *testing.T) {
	res := compareTrace(t, baseRecord(), inputFirst(), helloThenInput)
	tr := res.Trace
	if tr.Verdict != VerdictDifferent || tr.Left.Status != SidePass || tr.Right.Status != SideFail {
		t.Fatalf("trace = %+v", tr)
	}
	d := tr.Diagnostic
	if d == nil || d.Kind != DiagEdge || d.Side != "right" || strings.Join(d.EventIDs, ",") != "hello,input" || len(d.Locations) != 2 {
		t.Errorf("diagnostic = %+v", d)
	}
	if res.Status != Changed { // the captures themselves differ in interaction timing
		t.Errorf("status = %s", res.Status)
	}
}

func TestTraceNonconformingLeavesComparisonUnchanged(t *testing.T) {
	res := compareTrace(t, inputFirst(), inputFirst(), helloThenInput)
	if res.Status != Unchanged {
		t.Errorf("status = %s", res.Status)
	}
	tr := res.Trace
	if tr.Verdict != VerdictNonconforming || tr.Left.Status != SideFail || tr.Right.Status != SideFail || tr.Diagnostic.Side != "both" {
		t.Fatalf("trace = %+v", tr)
	}
}

func TestTraceUsesJournalOrderNotTimestamps(t *testing.T) {
	// The journal lists the input before the frame, although the frame's
	// at_ms is earlier: the journal decides.
	r := finishValid(baseRecord())
	j := r["event_journal"].(arr)
	var fi, ii int
	for i, e := range j {
		switch e.(obj)["collection"] {
		case "frames":
			fi = i
		case "interaction_events":
			ii = i
		}
	}
	j[fi].(obj)["collection"], j[ii].(obj)["collection"] = "interaction_events", "frames"
	res := mustCompare(t, env(t, baseRecord()), seal(t, r, nil), Options{Mode: ModeExact, Trace: mustSpec(t, helloThenInput)})
	if res.Trace.Verdict != VerdictDifferent || res.Trace.Right.Status != SideFail || res.Status != Unchanged {
		t.Fatalf("status %s, trace %+v", res.Status, res.Trace)
	}
}

func TestTraceUnknown(t *testing.T) {
	trunc := baseRecord()
	trunc["truncated"] = true
	res := compareTrace(t, baseRecord(), trunc, helloThenInput)
	if res.Trace.Verdict != VerdictUnknown || res.Trace.Right.Status != SideUnknown || res.Trace.Diagnostic.Kind != DiagJournal {
		t.Errorf("truncated: %+v", res.Trace)
	}
	covered := baseRecord()
	covered["residual_unknowns"] = arr{obj{"scope": "terminal", "reason": "renderer gap"}}
	res = compareTrace(t, covered, baseRecord(), helloThenInput)
	if res.Trace.Verdict != VerdictUnknown || res.Trace.Left.Status != SideUnknown || res.Trace.Diagnostic.Side != "left" {
		t.Errorf("residual: %+v", res.Trace)
	}
	// A residual unknown elsewhere does not matter.
	other := baseRecord()
	other["residual_unknowns"] = arr{obj{"scope": "process", "reason": "sampled"}}
	res = compareTrace(t, other, baseRecord(), helloThenInput)
	if res.Trace.Verdict != VerdictEquivalent {
		t.Errorf("unrelated residual: %+v", res.Trace)
	}
	noJournal := finishValid(baseRecord())
	noJournal["event_journal"] = arr{}
	res = mustCompare(t, seal(t, noJournal, nil), env(t, baseRecord()), Options{Mode: ModeExact, Trace: mustSpec(t, helloThenInput)})
	if res.Trace.Verdict != VerdictUnknown || !strings.Contains(res.Trace.Diagnostic.Message, "journal") {
		t.Errorf("no journal: %+v", res.Trace)
	}
}

func TestTracePredicateAndCardinality(t *testing.T) {
	bye := baseRecord()
	bye["frames"] = arr{frame(0, 5, "hello"), frame(1, 6, "bye")}
	res := compareTrace(t, baseRecord(), bye, helloThenInput)
	d := res.Trace.Diagnostic
	if res.Trace.Verdict != VerdictDifferent || d.Kind != DiagPredicate || d.Locations[0] != root+".frames[1]" {
		t.Errorf("trace = %+v", res.Trace)
	}
	twice := baseRecord()
	twice["frames"] = arr{frame(0, 5, "hello"), frame(1, 6, "hello")}
	res = compareTrace(t, baseRecord(), twice, helloThenInput)
	if d := res.Trace.Diagnostic; d.Kind != DiagCardinality || d.EventIDs[0] != "hello" || len(d.Locations) != 2 {
		t.Errorf("trace = %+v", res.Trace)
	}
	// With an exact count of 2 both pass or fail accordingly.
	two := spec(strings.Replace(evHello, `"ignore_fields"`, `"cardinality":{"kind":"exact","count":2},"ignore_fields"`, 1)+","+evInput,
		`{"kind":"partial_order","happens_before":[{"before":"hello","after":"input"}]}`)
	res = compareTrace(t, twice, twice, two)
	if res.Trace.Verdict != VerdictEquivalent {
		t.Errorf("trace = %+v", res.Trace)
	}
	// An optional event may be absent; a different unmatched record on each
	// side is not the same failure.
	opt := spec(evHello+","+evInput+`,{"id":"bye","source":"terminal_raw","exact":{"data":"bye"},"ignore_fields":["sequence","at_ms"],"cardinality":{"kind":"optional"}}`,
		`{"kind":"partial_order","happens_before":[{"before":"hello","after":"input"},{"before":"hello","after":"bye"}],"unordered_groups":[{"events":["input","bye"]}]}`)
	res = compareTrace(t, baseRecord(), bye, opt)
	if res.Trace.Verdict != VerdictEquivalent {
		t.Errorf("optional: %+v", res.Trace)
	}
	l, r := baseRecord(), baseRecord()
	l["frames"] = arr{frame(0, 5, "hello"), frame(1, 6, "one")}
	r["frames"] = arr{frame(0, 5, "hello"), frame(1, 6, "two")}
	res = compareTrace(t, l, r, helloThenInput)
	if res.Trace.Verdict != VerdictDifferent {
		t.Errorf("different unmatched records: %+v", res.Trace)
	}
}

func TestTraceNotBeforePrefixSuffix(t *testing.T) {
	unordered := func(extra string) string {
		return spec(evHello+","+evInput, `{"kind":"partial_order","unordered_groups":[{"events":["hello","input"]}]`+extra+`}`)
	}
	if res := compareTrace(t, baseRecord(), inputFirst(), unordered("")); res.Trace.Verdict != VerdictEquivalent {
		t.Errorf("unordered: %+v", res.Trace)
	}
	nb := unordered(`,"not_before":[{"event":"input","anchor":"hello"}]`)
	res := compareTrace(t, baseRecord(), inputFirst(), nb)
	if d := res.Trace.Diagnostic; res.Trace.Verdict != VerdictDifferent || d.Kind != DiagEdge || d.Side != "right" {
		t.Errorf("not_before: %+v", res.Trace)
	}
	res = compareTrace(t, baseRecord(), inputFirst(), unordered(`,"prefix":["hello"]`))
	if d := res.Trace.Diagnostic; d == nil || d.Kind != DiagPrefix || d.Side != "right" {
		t.Errorf("prefix: %+v", res.Trace)
	}
	res = compareTrace(t, baseRecord(), inputFirst(), unordered(`,"suffix":["input"]`))
	if d := res.Trace.Diagnostic; d == nil || d.Kind != DiagSuffix || d.Side != "right" {
		t.Errorf("suffix: %+v", res.Trace)
	}
	if c := compareTrace(t, baseRecord(), baseRecord(), unordered(`,"prefix":["hello"],"suffix":["input"]`)).Trace.Left.SatisfiedConstraints; c == nil ||
		len(c.Prefix) != 1 || len(c.Suffix) != 1 || len(c.UnorderedGroups) != 1 {
		t.Errorf("constraints = %+v", c)
	}
}

func TestTraceFiniteTraces(t *testing.T) {
	evs := evHello + "," + evInput + "," + evExit + "," + evSettled
	s := spec(evs, `{"kind":"finite_traces","variants":[`+
		`{"id":"typed-after","trace":["hello","input","exit","settled"]},`+
		`{"id":"either","trace":[{"unordered":["hello","input"]},"exit","settled"]}]}`)
	res := compareTrace(t, baseRecord(), inputFirst(), s)
	tr := res.Trace
	if tr.Verdict != VerdictEquivalent || *tr.Left.MatchedVariant != "typed-after" || *tr.Right.MatchedVariant != "either" {
		t.Fatalf("trace = %+v (%+v)", tr, tr.Diagnostic)
	}
	if len(tr.Right.Trace) != 4 || tr.Right.Trace[2].Location != root+".exit" || tr.Right.Trace[2].Source != "lifecycle" {
		t.Errorf("right trace = %+v", tr.Right.Trace)
	}
	strict := spec(evs, `{"kind":"finite_traces","variants":[{"id":"only","trace":["hello","input","exit","settled"]}]}`)
	res = compareTrace(t, baseRecord(), inputFirst(), strict)
	if d := res.Trace.Diagnostic; res.Trace.Verdict != VerdictDifferent || d.Kind != DiagTrace || d.EventIDs[0] != "input" {
		t.Errorf("trace = %+v", res.Trace)
	}
	// A declared source's records must all match: without the settlement
	// event, the settlement record fails the predicate check.
	noSettled := spec(evHello+","+evInput+","+evExit, `{"kind":"finite_traces","variants":[{"id":"only","trace":["hello","input","exit"]}]}`)
	res = compareTrace(t, baseRecord(), baseRecord(), noSettled)
	if d := res.Trace.Diagnostic; res.Trace.Verdict != VerdictNonconforming || d.Kind != DiagPredicate || d.Locations[0] != root+".settlement" {
		t.Errorf("trace = %+v", res.Trace)
	}
}

func TestTraceSources(t *testing.T) {
	l := baseRecord()
	l["protocol_events"] = arr{committed(protocolEvent(0, 30, "/api"))}
	l["replay_transitions"] = arr{transition(0, 31, "t1")}
	l["shim_events"] = arr{shimEvent(0, 32, "codex")}
	s := spec(`{"id":"req","source":"http","exact":{"path":"/api","method":"GET","direction":"request","protocol":"http","data":"<redacted-request-body>","outcome":"committed"},"ignore_fields":["sequence","at_ms"]},`+
		`{"id":"tr","source":"replay_transition","exact":{"transition_id":"t1","state_before":"s","state_after":"s","sensitive_aliases":[]},"ignore_fields":["sequence","at_ms"]},`+
		`{"id":"shim","source":"shim","exact":{"command":"codex","route_index":0,"arguments":["--version"],"working_directory":"<working-directory>","outcome":"matched"},"ignore_fields":["sequence","at_ms"]},`+
		evSettled+","+evExit,
		`{"kind":"partial_order","happens_before":[{"before":"req","after":"tr"},{"before":"tr","after":"shim"},{"before":"shim","after":"exit"},{"before":"exit","after":"settled"}]}`)
	res := compareTrace(t, l, clone(l), s)
	if res.Trace.Verdict != VerdictEquivalent {
		t.Fatalf("trace = %+v", res.Trace)
	}
	var locs []string
	for _, st := range res.Trace.Left.Trace {
		locs = append(locs, st.Source+"@"+strings.TrimPrefix(st.Location, root+"."))
	}
	if got := strings.Join(locs, " "); got != "http@protocol_events[0] replay_transition@replay_transitions[0] shim@shim_events[0] lifecycle@exit lifecycle@settlement" {
		t.Errorf("trace = %s", got)
	}
}

func FuzzParseTraceSpec(f *testing.F) {
	for _, s := range []string{
		helloThenInput,
		spec(evHello+","+evInput+","+evExit, `{"kind":"finite_traces","variants":[{"id":"a","trace":[{"unordered":["hello","input"]},"exit"]}]}`),
		spec(evHello+","+evInput, `{"kind":"partial_order","unordered_groups":[{"events":["hello","input"]}],"not_before":[{"event":"input","anchor":"hello"}],"prefix":["hello"],"suffix":["input"]}`),
		spec(evHello+","+evInput, `{"kind":"partial_order","happens_before":[{"before":"hello","after":"input"},{"before":"input","after":"hello"}]}`),
		`{"version":1,"events":[],"language":{}}`, `[]`, `{}`, `{"version":1,"events":[{"id":"a","source":"shim","exact":{},"cardinality":{"kind":"range","min":0,"max":3}}],"language":{"kind":"partial_order"}}`,
	} {
		f.Add([]byte(s))
	}
	base := env(f, baseRecord())
	other := env(f, inputFirst())
	f.Fuzz(func(t *testing.T, data []byte) {
		ts, err := ParseTraceSpec(data)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) || ce.Code != CodeInvalidTraceSpec || len(ce.Issues) == 0 || len(ce.Issues) > MaxTraceIssues {
				t.Fatalf("unstructured or unbounded error: %v", err)
			}
			return
		}
		res, err := Compare(base, other, Options{Mode: ModeExact, Trace: ts})
		if err != nil || res.Trace == nil {
			t.Fatalf("Compare with a valid spec: %v", err)
		}
		if _, err := Envelope(res, base, other); err != nil {
			t.Fatalf("Envelope: %v", err)
		}
	})
}
