package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// Issue is one violation Verify reports: a stable Code, the JSON Path of
// the offending value ("$" is the record) and a Message for people.
type Issue = strictjson.Issue

// Codes Verify shares with every strict JSON reader (strictjson.Code*).
const (
	CodeInvalidJSON   = strictjson.CodeInvalidJSON   // not one canonicalizable JSON value
	CodeWrongType     = strictjson.CodeWrongType     // a value of the wrong JSON type
	CodeMissingField  = strictjson.CodeMissingField  // a required member is absent
	CodeUnknownField  = strictjson.CodeUnknownField  // a member the record does not define
	CodeInvalidValue  = strictjson.CodeInvalidValue  // outside its enumeration or format
	CodeTooManyIssues = strictjson.CodeTooManyIssues // more issues than strictjson.DefaultMaxIssues
)

// Issue codes reported by Verify (besides the shared codes above).
const (
	CodeCommitmentMismatch = "commitment_mismatch" // a *_sha256 differs from the digest of its value, or two embedded values disagree
	CodeTimeOrder          = "time_order"          // completed_at before started_at, or an at_ms that goes back
	CodeSequenceGap        = "sequence_gap"        // a sequence that is not 0, 1, 2, …
	CodeCheckpointOrder    = "checkpoint_order"    // checkpoints not from before to after_settlement
	CodeTruncationMismatch = "truncation_mismatch" // a truncated checkpoint in a capture not marked truncated
	CodeExitMismatch       = "exit_mismatch"       // an exit code whose reason is not exited
	CodeJournalMismatch    = "journal_mismatch"    // event_journal does not list every observation once, in order
	CodeShimOveruse        = "shim_overuse"        // more matched shim calls than max_calls
	CodeStateMismatch      = "state_mismatch"      // a file state, effect, settlement or cleanup that contradicts itself
)

// recordFields are the members of a capture record (docs/formats/capture-record.md).
var recordFields = Fields(Record{})

// observationLists are the record's lists of journaled observations, in
// record order.
var observationLists = []string{"frames", "rendered_frames", "interaction_events", "process_samples",
	"filesystem_checkpoints", "shim_events", "protocol_events", "replay_transitions"}

// ObservationLists returns the names of the record's lists of journaled
// observations, in record order (a new slice each call); an event_journal
// entry names one of them, or "exit" or "settlement".
func ObservationLists() []string { return slices.Clone(observationLists) }

// journalCollections are the record lists (and lifecycle entries) an
// event_journal entry may name.
var journalCollections = append(slices.Clone(observationLists), "exit", "settlement")

// Verify re-checks a capture record (an Evidence normalized_result)
// against the invariants of docs/formats/capture-record.md and returns every violation, each
// with the JSON path of the offending value ("$" is the record); nil means
// the record holds. It never repairs anything and never panics.
//
// Checked: every frame, rendered frame, interaction event, process sample
// and shim event has exactly its members, of their types and enumerations
// (elements and item, verify_items.go); the record is one JSON value RFC 8785 can canonicalize (no
// duplicate names) and an object with exactly the record's members and
// schema_version 4; every manifest *_sha256 equals the digest of its
// embedded value (executable_sha256, whose value is not embedded, must be
// 64 lowercase hex digits), and normalization, shim_plan, replay_plan and
// comparison_contract agree with manifest.scenario; started_at ≤
// completed_at (RFC 3339); sequences run 0, 1, 2, … with non-decreasing
// at_ms in frames, rendered_frames, shim_events, protocol_events and
// replay_transitions, interaction_events have sequences with
// non-decreasing scheduled_at_ms and dispatched_at_ms, and process_samples
// and filesystem_checkpoints have non-decreasing at_ms; checkpoints have
// unique names, start with before and end with after_settlement;
// files_before and files_after are the files of those two; every file
// state and effect is self-consistent; a truncated checkpoint implies a
// truncated capture; an exit code only with reason exited; settlement
// state and cleanup outcome agree; cleanup is verified and removed;
// matched shim calls stay within their route's max_calls; and a
// non-empty event_journal lists every observation exactly once, in
// capture order (capture_order 0, 1, 2, … and each collection's indices
// in order; exit and settlement once each); limitations are strings and
// residual_unknowns {scope, reason}; protocol_events and
// replay_transitions agree with the replay plan (replayRecord,
// verify_replay.go); reactive_run is null exactly without
// a reactive graph and otherwise a run reactive.VerifyRun accepts.
func Verify(raw json.RawMessage) []Issue {
	v := &verifier{}
	if err := evidence.CheckCanonical(raw); err != nil {
		v.add("$", CodeInvalidJSON, "the record is not canonicalizable JSON: %s", strictjson.Truncate(err.Error(), 200))
		return v.issues.List
	}
	rec := v.object(raw, "$", recordFields...)
	if rec == nil {
		return v.issues.List
	}
	if n, ok := v.intAt(rec, "$", "schema_version"); ok && n != SchemaVersion {
		v.add("$.schema_version", CodeInvalidValue, "schema_version must be %d", SchemaVersion)
	}
	v.manifest(rec)
	lens := map[string]int{}
	for _, name := range []string{"frames", "rendered_frames", "shim_events", "protocol_events", "replay_transitions"} {
		lens[name] = v.sequenced(rec, name, "at_ms")
	}
	lens["interaction_events"] = v.sequenced(rec, "interaction_events", "scheduled_at_ms", "dispatched_at_ms")
	lens["process_samples"] = v.timed(rec, "process_samples")
	lens["filesystem_checkpoints"] = v.checkpoints(rec)
	lens["exit"], lens["settlement"] = 1, 1
	v.exit(rec)
	v.settlement(rec)
	v.cleanup(rec)
	v.shimCalls(rec)
	v.replayRecord(rec) // verify_replay.go
	v.journal(rec, lens)
	v.reactiveRun(rec) // verify_reactive.go
	v.notes(rec)
	return v.issues.List
}

// notes checks the shapes of limitations and residual_unknowns.
func (v *verifier) notes(rec map[string]json.RawMessage) {
	if a, ok := v.array(rec, "$", "limitations"); ok {
		for i, raw := range a {
			if k := rawKind(raw); k != 's' {
				v.add(fmt.Sprintf("$.limitations[%d]", i), CodeWrongType, "must be a string, not %s", rawKindName(k))
			}
		}
	}
	if a, ok := v.array(rec, "$", "residual_unknowns"); ok {
		for i, raw := range a {
			at := fmt.Sprintf("$.residual_unknowns[%d]", i)
			if u := v.object(raw, at, "scope", "reason"); u != nil {
				v.isStrAt(u, at, "scope")
				v.isStrAt(u, at, "reason")
			}
		}
	}
}

type verifier struct{ issues strictjson.Collector }

func (v *verifier) add(path, code, format string, args ...any) {
	v.issues.Add(path, code, format, args...)
}

// rawKind is the JSON type of a value: 'o', 'a', 's', 'n', 'b' or 'z' (null).
func rawKind(raw json.RawMessage) byte {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return 0
	}
	switch c := raw[0]; {
	case c == '{':
		return 'o'
	case c == '[':
		return 'a'
	case c == '"':
		return 's'
	case c == 't' || c == 'f':
		return 'b'
	case c == 'n':
		return 'z'
	default:
		return 'n'
	}
}

func rawKindName(k byte) string {
	return strictjson.Kind(k).String() // "null" for 'z' and for 0
}

// object decodes an object; with allowed, it reports missing and unknown
// members.
func (v *verifier) object(raw json.RawMessage, path string, allowed ...string) map[string]json.RawMessage {
	return v.objectInto(nil, raw, path, allowed...)
}

// objectInto is object decoding into m, cleared first (a new map when m is
// nil), for a loop that reads one element at a time.
func (v *verifier) objectInto(m map[string]json.RawMessage, raw json.RawMessage, path string, allowed ...string) map[string]json.RawMessage {
	if k := rawKind(raw); k != 'o' {
		v.add(path, CodeWrongType, "must be an object, not %s", rawKindName(k))
		return nil
	}
	// VerifyRecord canonicalized the whole record first, so raw is valid
	// JSON: its members are delimited, not scanned twice more as
	// json.Unmarshal would (the last of repeated names kept, as it does).
	names, vals, err := strictjson.SplitObject(raw)
	if err != nil {
		v.add(path, CodeInvalidJSON, "%s", strictjson.Truncate(err.Error(), 200))
		return nil
	}
	if m == nil {
		m = make(map[string]json.RawMessage, len(names))
	} else {
		clear(m)
	}
	for i, k := range names {
		m[k] = vals[i]
	}
	if len(allowed) > 0 {
		v.exactly(m, path, allowed, nil)
	}
	return m
}

// exactly reports the members of allowed that m lacks (but those in
// elsewhere, which another check reports) and the members of m not in
// allowed, in name order.
func (v *verifier) exactly(m map[string]json.RawMessage, path string, allowed []string, elsewhere map[string]bool) {
	if len(m) == len(allowed) {
		all := true
		for _, k := range allowed {
			if _, ok := m[k]; !ok {
				all = false
				break
			}
		}
		if all {
			return // m's members are allowed's (distinct names, as many)
		}
	}
	known := map[string]bool{}
	for _, k := range allowed {
		known[k] = true
		if _, ok := m[k]; !ok && !elsewhere[k] {
			v.add(path+strictjson.KeyPath(k), CodeMissingField, "required field is missing")
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !known[k] {
			v.add(path+strictjson.KeyPath(k), CodeUnknownField, "unknown field %q", strictjson.Truncate(k, 64))
		}
	}
}

// array decodes member key of m as an array (nil when absent or not one).
func (v *verifier) array(m map[string]json.RawMessage, path, key string) ([]json.RawMessage, bool) {
	raw, ok := m[key]
	if !ok {
		return nil, false
	}
	if k := rawKind(raw); k != 'a' {
		v.add(path+strictjson.KeyPath(key), CodeWrongType, "must be an array, not %s", rawKindName(k))
		return nil, false
	}
	elems, err := strictjson.SplitArray(raw) // valid JSON, as in object
	if err != nil {
		v.add(path+strictjson.KeyPath(key), CodeInvalidJSON, "%s", strictjson.Truncate(err.Error(), 200))
		return nil, false
	}
	a := make([]json.RawMessage, len(elems))
	for i, e := range elems {
		a[i] = e
	}
	return a, true
}

// integer reads an integral number.
func (v *verifier) integer(raw json.RawMessage, path string) (int64, bool) {
	if k := rawKind(raw); k != 'n' {
		v.add(path, CodeWrongType, "must be an integer, not %s", rawKindName(k))
		return 0, false
	}
	if n, ok := plainInt(raw); ok {
		return n, true
	}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
	if err != nil || f != float64(int64(f)) {
		v.add(path, CodeWrongType, "must be an integer, not %s", strictjson.Truncate(string(raw), 40))
		return 0, false
	}
	return int64(f), true
}

// plainInt is the value of a JSON number token of at most 15 digits and
// no fraction or exponent, which strconv.ParseFloat reads exactly, so
// integer's answer without its allocation.
func plainInt(raw json.RawMessage) (int64, bool) {
	d := raw
	neg := len(d) > 0 && d[0] == '-'
	if neg {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// intAt reads member key of m as an integer (silently absent when missing:
// object has reported it).
func (v *verifier) intAt(m map[string]json.RawMessage, path, key string) (int64, bool) {
	raw, ok := m[key]
	if !ok {
		return 0, false
	}
	if n, ok := plainInt(raw); ok {
		return n, true // no issue, so no path to build
	}
	return v.integer(raw, path+strictjson.KeyPath(key))
}

// strAt reads member key of m as a string; with nullable, null reads as
// ("", false) without an issue.
func (v *verifier) strAt(m map[string]json.RawMessage, path, key string, nullable bool) (string, bool) {
	raw, ok := m[key]
	if !ok {
		return "", false
	}
	if k := rawKind(raw); k != 's' {
		if !(nullable && k == 'z') {
			v.add(path+strictjson.KeyPath(key), CodeWrongType, "must be a string, not %s", rawKindName(k))
		}
		return "", false
	}
	if s, ok := plainString(raw); ok {
		return s, true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		v.add(path+strictjson.KeyPath(key), CodeInvalidJSON, "%s", strictjson.Truncate(err.Error(), 200))
		return "", false
	}
	return s, true
}

// plainString is the value of a JSON string token without escapes, whose
// bytes are its value as json.Unmarshal decodes it (invalid UTF-8, which
// it replaces, is left to it); hand-written because a record is mostly
// strings and Unmarshal scans each twice and allocates.
func plainString(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body, ascii := raw[1:len(raw)-1], true
	for _, c := range body {
		switch {
		case c == '\\' || c == '"' || c < 0x20:
			return "", false
		case c >= 0x80:
			ascii = false
		}
	}
	if !ascii && !utf8.Valid(body) {
		return "", false
	}
	return string(body), true
}

// isStrAt reports, as strAt, a member key of m that is not a string, for
// the members whose value Verify does not read: Verify has checked the
// record is valid JSON, so a string token always decodes.
func (v *verifier) isStrAt(m map[string]json.RawMessage, path, key string) {
	if raw, ok := m[key]; ok {
		if k := rawKind(raw); k != 's' {
			v.add(path+strictjson.KeyPath(key), CodeWrongType, "must be a string, not %s", rawKindName(k))
		}
	}
}

func (v *verifier) boolAt(m map[string]json.RawMessage, path, key string) (bool, bool) {
	raw, ok := m[key]
	if !ok {
		return false, false
	}
	if k := rawKind(raw); k != 'b' {
		v.add(path+strictjson.KeyPath(key), CodeWrongType, "must be true or false, not %s", rawKindName(k))
		return false, false
	}
	return bytes.HasPrefix(bytes.TrimSpace(raw), []byte("true")), true
}

func isNull(raw json.RawMessage) bool { return rawKind(raw) == 'z' }

// digestOf is the commitment digest of raw ("" when it has none).
func digestOf(raw json.RawMessage) string {
	d, err := evidence.DigestJSON(raw)
	if err != nil {
		return ""
	}
	return d
}

// manifest checks the commitments and the start and completion times.
func (v *verifier) manifest(rec map[string]json.RawMessage) {
	raw, ok := rec["manifest"]
	if !ok {
		return
	}
	const p = "$.manifest"
	m := v.object(raw, p, Fields(Manifest{})...)
	if m == nil {
		return
	}
	for _, k := range []string{"gatehouse_version", "provider_version", "platform", "architecture", "pty_backend"} {
		v.isStrAt(m, p, k)
	}
	commit := func(digestKey string, value json.RawMessage, present bool) {
		d, ok := v.strAt(m, p, digestKey, false)
		if !ok || !present {
			return
		}
		if got := digestOf(value); d != got {
			v.add(p+"."+digestKey, CodeCommitmentMismatch, "%s does not equal the digest of its value (%s)", strictjson.Truncate(d, 80), got)
		}
	}
	scenario, hasScenario := m["scenario"]
	norm, hasNorm := rec["normalization"]
	commit("full_scenario_sha256", scenario, hasScenario)
	commit("comparison_contract_sha256", m["comparison_contract"], m["comparison_contract"] != nil)
	commit("normalization_sha256", norm, hasNorm)
	commit("shim_plan_sha256", m["shim_plan"], m["shim_plan"] != nil)
	commit("replay_plan_sha256", m["replay_plan"], m["replay_plan"] != nil)
	if d, ok := v.strAt(m, p, "executable_sha256", false); ok && !strictjson.IsHex64(d) {
		v.add(p+".executable_sha256", CodeInvalidValue, "must be 64 lowercase hexadecimal digits")
	}
	if hasScenario {
		v.scenarioAgrees(rec, m, scenario)
	}
	start, ok1 := v.timeAt(m, p, "started_at")
	end, ok2 := v.timeAt(m, p, "completed_at")
	if ok1 && ok2 && end.Before(start) {
		v.add(p+".completed_at", CodeTimeOrder, "completed_at is before started_at")
	}
}

// scenarioAgrees checks that the values committed beside the scenario are
// the scenario's own members.
func (v *verifier) scenarioAgrees(rec, m map[string]json.RawMessage, raw json.RawMessage) {
	sc := v.object(raw, "$.manifest.scenario")
	if sc == nil {
		return
	}
	same := func(path string, got json.RawMessage, want json.RawMessage, what string) {
		if got == nil || want == nil {
			return
		}
		if dg, dw := digestOf(got), digestOf(want); dg == "" || dg != dw {
			v.add(path, CodeCommitmentMismatch, "differs from %s", what)
		}
	}
	same("$.normalization", rec["normalization"], sc["normalization"], "manifest.scenario.normalization")
	same("$.manifest.shim_plan", m["shim_plan"], sc["command_shims"], "manifest.scenario.command_shims")
	same("$.manifest.replay_plan", m["replay_plan"], sc["replay"], "manifest.scenario.replay")
	// comparison_contract: the scenario without executable, arguments and
	// environment, plus the sorted environment names.
	contract := make(map[string]json.RawMessage, len(sc))
	for k, x := range sc {
		contract[k] = x
	}
	delete(contract, "executable")
	delete(contract, "arguments")
	delete(contract, "environment")
	names := []string{}
	if env, ok := sc["environment"]; ok && rawKind(env) == 'o' {
		var e map[string]json.RawMessage
		if json.Unmarshal(env, &e) == nil {
			for k := range e {
				names = append(names, k)
			}
		}
	}
	sort.Strings(names)
	b, _ := json.Marshal(names)
	contract["environment_names"] = b
	want, err := json.Marshal(contract)
	if err == nil {
		same("$.manifest.comparison_contract", m["comparison_contract"], want, "the contract derived from manifest.scenario")
	}
}

func (v *verifier) timeAt(m map[string]json.RawMessage, path, key string) (time.Time, bool) {
	s, ok := v.strAt(m, path, key, false)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		v.add(path+"."+key, CodeInvalidValue, "%q is not an RFC 3339 time", strictjson.Truncate(s, 64))
		return time.Time{}, false
	}
	return t, true
}

// elements checks the objects of list key (exactly and item) and returns,
// for each, the values of its members keys (nil when absent; a nil row
// for a non-object) and the list's length. The members of one element at
// a time are decoded, into one map.
func (v *verifier) elements(rec map[string]json.RawMessage, key string, keys []string) ([][]json.RawMessage, int) {
	a, ok := v.array(rec, "$", key)
	if !ok {
		return nil, 0
	}
	rows := make([][]json.RawMessage, len(a))
	flat := make([]json.RawMessage, len(a)*len(keys))
	fields := itemFields[key]
	var m map[string]json.RawMessage
	for i, e := range a {
		if key == "frames" && len(keys) == 2 && keys[0] == "sequence" && keys[1] == "at_ms" {
			if seq, atMS, ok := plainFrame(e); ok {
				row := flat[i*2 : i*2+2 : i*2+2]
				row[0], row[1] = seq, atMS
				rows[i] = row
				continue // exactly its members, data a string: nothing to report
			}
		}
		at := elemPath(key, i)
		got := v.objectInto(m, e, at)
		if got == nil {
			continue
		}
		m = got
		row := flat[i*len(keys) : (i+1)*len(keys) : (i+1)*len(keys)]
		for j, k := range keys {
			row[j] = m[k]
		}
		rows[i] = row
		if fields != nil {
			v.exactly(m, at, fields, orderFields)
			v.item(key, m, at) // verify_items.go
		}
	}
	return rows, len(a)
}

// elemPath is "$.key[i]".
func elemPath(key string, i int) string {
	return "$." + key + "[" + strconv.Itoa(i) + "]"
}

// sequenced checks sequence 0, 1, 2, … and non-decreasing times in list
// key; it returns the list's length.
func (v *verifier) sequenced(rec map[string]json.RawMessage, key string, times ...string) int {
	rows, n := v.elements(rec, key, append([]string{"sequence"}, times...))
	last := make([]int64, len(times))
	for i, row := range rows {
		if row == nil {
			continue
		}
		if s, ok := plainInt(row[0]); ok && s == int64(i) && v.timesHold(row[1:], last) {
			continue // in order: no issue, so no path to build
		}
		at := elemPath(key, i)
		if raw := row[0]; raw == nil {
			v.add(at+".sequence", CodeMissingField, "required field is missing")
		} else if s, ok := v.integer(raw, at+".sequence"); ok && s != int64(i) {
			v.add(at+".sequence", CodeSequenceGap, "sequence %d at position %d; sequences run 0, 1, 2, …", s, i)
		}
		v.times(row[1:], at, times, last)
	}
	return n
}

// timed checks non-decreasing at_ms in list key; it returns its length.
func (v *verifier) timed(rec map[string]json.RawMessage, key string) int {
	keys := []string{"at_ms"}
	rows, n := v.elements(rec, key, keys)
	last := []int64{0}
	for i, row := range rows {
		if row != nil && !v.timesHold(row, last) {
			v.times(row, elemPath(key, i), keys, last)
		}
	}
	return n
}

// timesHold reports whether times would report nothing for vals: each is
// a plain integer no earlier than last; then it advances last as times
// does (and otherwise leaves it to times).
func (v *verifier) timesHold(vals []json.RawMessage, last []int64) bool {
	for j, raw := range vals {
		if t, ok := plainInt(raw); !ok || t < last[j] {
			return false
		}
	}
	for j, raw := range vals {
		t, _ := plainInt(raw)
		last[j] = max(last[j], t)
	}
	return true
}

// times checks the values of members keys (nil when absent) against the
// latest before them, last.
func (v *verifier) times(vals []json.RawMessage, at string, keys []string, last []int64) {
	for j, k := range keys {
		raw := vals[j]
		if raw == nil {
			v.add(at+"."+k, CodeMissingField, "required field is missing")
			continue
		}
		t, ok := v.integer(raw, at+"."+k)
		if !ok {
			continue
		}
		if t < last[j] {
			v.add(at+"."+k, CodeTimeOrder, "%s %d is before the previous entry's %d", k, t, last[j])
		}
		last[j] = max(last[j], t)
	}
}

// checkpoints checks the checkpoint list and the files and effects around
// it; it returns the list's length.
func (v *verifier) checkpoints(rec map[string]json.RawMessage) int {
	a, ok := v.array(rec, "$", "filesystem_checkpoints")
	if !ok {
		return 0
	}
	truncated, hasTruncated := v.boolAt(rec, "$", "truncated")
	if len(a) == 0 {
		v.add("$.filesystem_checkpoints", CodeCheckpointOrder, "the checkpoints must start with before and end with after_settlement")
	}
	names := map[string]int{}
	var last int64
	for i, raw := range a {
		at := fmt.Sprintf("$.filesystem_checkpoints[%d]", i)
		cp := v.object(raw, at, "name", "at_ms", "files", "effects", "truncated")
		if cp == nil {
			continue
		}
		name, ok := v.strAt(cp, at, "name", false)
		if ok {
			if first, dup := names[name]; dup {
				v.add(at+".name", CodeCheckpointOrder, "checkpoint %q is already recorded at index %d", strictjson.Truncate(name, 64), first)
			} else {
				names[name] = i
			}
			switch {
			case i == 0 && name != CheckpointBefore:
				v.add(at+".name", CodeCheckpointOrder, "the first checkpoint must be before, not %q", strictjson.Truncate(name, 64))
			case i == len(a)-1 && name != CheckpointAfterSettlement:
				v.add(at+".name", CodeCheckpointOrder, "the last checkpoint must be after_settlement, not %q", strictjson.Truncate(name, 64))
			case i != 0 && name == CheckpointBefore, i != len(a)-1 && name == CheckpointAfterSettlement:
				v.add(at+".name", CodeCheckpointOrder, "%s is not where it belongs", name)
			}
		}
		if t, ok := v.intAt(cp, at, "at_ms"); ok {
			if t < last {
				v.add(at+".at_ms", CodeTimeOrder, "at_ms %d is before the previous checkpoint's %d", t, last)
			}
			last = max(last, t)
		}
		if cpTrunc, ok := v.boolAt(cp, at, "truncated"); ok && cpTrunc && hasTruncated && !truncated {
			v.add("$.truncated", CodeTruncationMismatch, "checkpoint %d is truncated, so the capture must be too", i)
		}
		if files, ok := v.array(cp, at, "files"); ok {
			for j, f := range files {
				v.fileState(f, fmt.Sprintf("%s.files[%d]", at, j))
			}
		}
		if effects, ok := v.array(cp, at, "effects"); ok {
			for j, e := range effects {
				v.fileEffect(e, fmt.Sprintf("%s.effects[%d]", at, j))
			}
		}
	}
	for _, side := range []struct{ key, name string }{{"files_before", CheckpointBefore}, {"files_after", CheckpointAfterSettlement}} {
		files, ok := v.array(rec, "$", side.key)
		if !ok {
			continue
		}
		for j, f := range files {
			v.fileState(f, fmt.Sprintf("$.%s[%d]", side.key, j))
		}
		if i, ok := names[side.name]; ok {
			var cp map[string]json.RawMessage
			if json.Unmarshal(a[i], &cp) == nil && cp["files"] != nil && digestOf(cp["files"]) != digestOf(rec[side.key]) {
				v.add("$."+side.key, CodeStateMismatch, "differs from the files of checkpoint %s", side.name)
			}
		}
	}
	if effects, ok := v.array(rec, "$", "filesystem_effects"); ok {
		for j, e := range effects {
			v.fileEffect(e, fmt.Sprintf("$.filesystem_effects[%d]", j))
		}
	}
	return len(a)
}

// fileState checks one FileState.
func (v *verifier) fileState(raw json.RawMessage, at string) {
	f := v.object(raw, at, "path", "mode", "size", "type", "sha256", "symlink_target")
	if f == nil {
		return
	}
	v.isStrAt(f, at, "path")
	v.intAt(f, at, "mode")
	if n, ok := v.intAt(f, at, "size"); ok && n < 0 {
		v.add(at+".size", CodeInvalidValue, "size is negative")
	}
	typ, ok := v.strAt(f, at, "type", false)
	if ok && typ != FileTypeFile && typ != FileTypeSymlink && typ != FileTypeDirectory && typ != FileTypeOther {
		v.add(at+".type", CodeInvalidValue, "%q is not file, symlink, directory or other", strictjson.Truncate(typ, 64))
		ok = false
	}
	sum, hasSum := v.strAt(f, at, "sha256", true)
	switch {
	case hasSum && !strictjson.IsHex64(sum):
		v.add(at+".sha256", CodeInvalidValue, "must be 64 lowercase hexadecimal digits or null")
	case hasSum && ok && typ != FileTypeFile:
		v.add(at+".sha256", CodeStateMismatch, "only files have a sha256")
	}
	if _, hasTarget := v.strAt(f, at, "symlink_target", true); hasTarget && ok && typ != FileTypeSymlink {
		v.add(at+".symlink_target", CodeStateMismatch, "only symlinks have a target")
	}
}

// fileEffect checks one FileEffect.
func (v *verifier) fileEffect(raw json.RawMessage, at string) {
	e := v.object(raw, at, "path", "status", "before", "after")
	if e == nil {
		return
	}
	v.isStrAt(e, at, "path")
	status, ok := v.strAt(e, at, "status", false)
	for _, side := range []string{"before", "after"} {
		if x, present := e[side]; present && !isNull(x) {
			v.fileState(x, at+"."+side)
		}
	}
	if !ok {
		return
	}
	before, after := e["before"] != nil && !isNull(e["before"]), e["after"] != nil && !isNull(e["after"])
	switch status {
	case EffectCreated:
		if before || !after {
			v.add(at, CodeStateMismatch, "a created entry has no before and an after")
		}
	case EffectDeleted:
		if !before || after {
			v.add(at, CodeStateMismatch, "a deleted entry has a before and no after")
		}
	case EffectModified, EffectUnchanged:
		if !before || !after {
			v.add(at, CodeStateMismatch, "a %s entry has a before and an after", status)
		}
	default:
		v.add(at+".status", CodeInvalidValue, "%q is not created, deleted, modified or unchanged", strictjson.Truncate(status, 64))
	}
}

func (v *verifier) exit(rec map[string]json.RawMessage) {
	raw, ok := rec["exit"]
	if !ok {
		return
	}
	e := v.object(raw, "$.exit", "code", "signal", "reason")
	if e == nil {
		return
	}
	reason, ok := v.strAt(e, "$.exit", "reason", false)
	if ok && reason != ExitReasonExited && reason != ExitReasonTimeout && reason != ExitReasonIdleTimeout {
		v.add("$.exit.reason", CodeInvalidValue, "%q is not exited, timeout or idle_timeout", strictjson.Truncate(reason, 64))
	}
	if code, present := e["code"]; present && !isNull(code) {
		if _, isInt := v.integer(code, "$.exit.code"); isInt && ok && reason != ExitReasonExited {
			v.add("$.exit.code", CodeExitMismatch, "an exit code is recorded only when the reason is exited, not %s", strictjson.Truncate(reason, 64))
		}
	}
	v.strAt(e, "$.exit", "signal", true)
}

func (v *verifier) settlement(rec map[string]json.RawMessage) {
	raw, ok := rec["settlement"]
	if !ok {
		return
	}
	const p = "$.settlement"
	s := v.object(raw, p, "state", "elapsed_ms", "cleanup_outcome")
	if s == nil {
		return
	}
	v.intAt(s, p, "elapsed_ms")
	state, ok1 := v.strAt(s, p, "state", false)
	outcome, ok2 := v.strAt(s, p, "cleanup_outcome", false)
	if !ok1 || !ok2 {
		return
	}
	switch state {
	case SettlementQuiesced:
		if outcome != CleanupNotRequired {
			v.add(p+".cleanup_outcome", CodeStateMismatch, "a quiesced tree needs no cleanup (not_required)")
		}
	case SettlementAliveAtDeadline, SettlementUnverifiable:
		if outcome != CleanupCleaned && outcome != CleanupFailed {
			v.add(p+".cleanup_outcome", CodeStateMismatch, "after %s the cleanup outcome is cleaned or failed", state)
		}
	default:
		v.add(p+".state", CodeInvalidValue, "%q is not quiesced, alive_at_deadline or unverifiable", strictjson.Truncate(state, 64))
	}
}

func (v *verifier) cleanup(rec map[string]json.RawMessage) {
	raw, ok := rec["cleanup"]
	if !ok {
		return
	}
	c := v.object(raw, "$.cleanup", "owned_process_group", "temporary_root")
	if c == nil {
		return
	}
	if s, ok := v.strAt(c, "$.cleanup", "owned_process_group", false); ok && s != OwnedProcessGroupVerified {
		v.add("$.cleanup.owned_process_group", CodeStateMismatch, "must be verified")
	}
	if s, ok := v.strAt(c, "$.cleanup", "temporary_root", false); ok && s != TemporaryRootRemoved {
		v.add("$.cleanup.temporary_root", CodeStateMismatch, "must be removed")
	}
}

// shimCalls checks that matched shim calls stay within max_calls of the
// route they matched (routes from manifest.scenario.command_shims).
func (v *verifier) shimCalls(rec map[string]json.RawMessage) {
	var events []json.RawMessage
	if a, ok := rec["shim_events"]; !ok || json.Unmarshal(a, &events) != nil || len(events) == 0 {
		return
	}
	var manifest struct {
		Scenario struct {
			CommandShims []struct {
				Name   string `json:"name"`
				Routes []struct {
					MaxCalls int64 `json:"max_calls"`
				} `json:"routes"`
			} `json:"command_shims"`
		} `json:"scenario"`
	}
	if json.Unmarshal(rec["manifest"], &manifest) != nil {
		return // the manifest has been reported
	}
	maxCalls := map[string]int64{}
	for _, s := range manifest.Scenario.CommandShims {
		for i, r := range s.Routes {
			maxCalls[fmt.Sprintf("%s\x00%d", s.Name, i)] = r.MaxCalls
		}
	}
	calls := map[string]int64{}
	for i, e := range events {
		var ev struct {
			Command    string `json:"command"`
			RouteIndex *int64 `json:"route_index"`
			Outcome    string `json:"outcome"`
		}
		if json.Unmarshal(e, &ev) != nil || ev.Outcome != "matched" {
			continue
		}
		at := fmt.Sprintf("$.shim_events[%d]", i)
		if ev.RouteIndex == nil {
			v.add(at+".route_index", CodeStateMismatch, "a matched call names its route")
			continue
		}
		key := fmt.Sprintf("%s\x00%d", ev.Command, *ev.RouteIndex)
		limit, known := maxCalls[key]
		if !known {
			v.add(at+".route_index", CodeStateMismatch, "shim %q has no route %d", strictjson.Truncate(ev.Command, 64), *ev.RouteIndex)
			continue
		}
		calls[key]++
		if calls[key] > limit {
			v.add(at, CodeShimOveruse, "route %d of shim %q allows %d calls; this is call %d", *ev.RouteIndex, strictjson.Truncate(ev.Command, 64), limit, calls[key])
		}
	}
}

// journal checks that a non-empty event_journal lists every observation
// exactly once, in capture order; lens holds each collection's length.
func (v *verifier) journal(rec map[string]json.RawMessage, lens map[string]int) {
	a, ok := v.array(rec, "$", "event_journal")
	if !ok || len(a) == 0 {
		return
	}
	known := map[string]bool{}
	for _, c := range journalCollections {
		known[c] = true
	}
	seen := map[string]int64{}
	var m map[string]json.RawMessage
	for i, raw := range a {
		if o, c, idx, ok := plainJournalEntry(raw); ok && o == int64(i) && known[string(c)] && idx == seen[string(c)] {
			seen[string(c)]++
			continue // the entry has no issue: it is not decoded further
		}
		at := elemPath("event_journal", i)
		e := v.objectInto(m, raw, at, "capture_order", "collection", "index")
		if e == nil {
			continue
		}
		m = e
		if o, ok := v.intAt(e, at, "capture_order"); ok && o != int64(i) {
			v.add(at+".capture_order", CodeJournalMismatch, "capture_order %d at position %d; it runs 0, 1, 2, …", o, i)
		}
		c, ok1 := v.strAt(e, at, "collection", false)
		idx, ok2 := v.intAt(e, at, "index")
		if !ok1 || !ok2 {
			continue
		}
		if !known[c] {
			v.add(at+".collection", CodeInvalidValue, "%q is not a record collection", strictjson.Truncate(c, 64))
			continue
		}
		if idx != seen[c] {
			v.add(at+".index", CodeJournalMismatch, "%s[%d] where %s[%d] comes next: each observation is listed once, in order", c, idx, c, seen[c])
		}
		seen[c]++
	}
	for _, c := range journalCollections {
		if n := int64(lens[c]); seen[c] != n {
			v.add("$.event_journal", CodeJournalMismatch, "has %d entries for the %d %s observations", seen[c], n, c)
		}
	}
}

// plainJournalEntry reads an entry written as encoding/json writes a
// JournalEntry, {"capture_order":N,"collection":"…","index":N} with
// plain integers and no escape in the name; any other spelling is not
// ok and is left to the general checks. Hand-written because a journal
// has an entry per observation.
func plainJournalEntry(raw json.RawMessage) (order int64, collection []byte, index int64, ok bool) {
	rest, found := bytes.CutPrefix(raw, []byte(`{"capture_order":`))
	if !found {
		return 0, nil, 0, false
	}
	num, rest, found := bytes.Cut(rest, []byte(`,"collection":"`))
	if order, ok = plainInt(num); !found || !ok {
		return 0, nil, 0, false
	}
	collection, rest, found = bytes.Cut(rest, []byte(`","index":`))
	if !found || bytes.IndexByte(collection, '\\') >= 0 || bytes.IndexByte(collection, '"') >= 0 {
		return 0, nil, 0, false
	}
	num, found = bytes.CutSuffix(rest, []byte(`}`))
	if index, ok = plainInt(num); !found || !ok {
		return 0, nil, 0, false
	}
	return order, collection, index, true
}

// plainFrame reads a frame written as encoding/json writes a Frame,
// {"sequence":N,"at_ms":N,"data":"…"} with plain integers, returning the
// two numbers' tokens; any other spelling is not ok and is left to the
// general checks. The record is valid JSON, so the data token is one
// string when no unescaped quote is inside it. Hand-written because a
// capture is mostly frames.
func plainFrame(raw json.RawMessage) (sequence, atMS json.RawMessage, ok bool) {
	rest, found := bytes.CutPrefix(raw, []byte(`{"sequence":`))
	if !found {
		return nil, nil, false
	}
	sequence, rest, found = bytes.Cut(rest, []byte(`,"at_ms":`))
	if _, ok := plainInt(sequence); !found || !ok {
		return nil, nil, false
	}
	atMS, rest, found = bytes.Cut(rest, []byte(`,"data":"`))
	if _, ok := plainInt(atMS); !found || !ok {
		return nil, nil, false
	}
	body, found := bytes.CutSuffix(rest, []byte(`"}`))
	if !found {
		return nil, nil, false
	}
	// No quote inside the body may be unescaped (an even number of
	// backslashes before it); the quotes are found with bytes.IndexByte.
	for i := 0; ; i++ {
		k := bytes.IndexByte(body[i:], '"')
		if k < 0 {
			return sequence, atMS, true
		}
		i += k
		n := 0
		for n < i && body[i-n-1] == '\\' {
			n++
		}
		if n%2 == 0 {
			return nil, nil, false
		}
	}
}
