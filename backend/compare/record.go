package compare

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	crecord "github.com/gatehouse/gatehouse/backend/capture/record"
	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// maxIssuesPerSide bounds the issues reported for one record, so a large
// broken capture does not produce an unbounded error.
const maxIssuesPerSide = 100

// The record lists that hold journaled observations, in record order.
var collections = crecord.ObservationLists()

// record is the part of a capture record (the normalized_result of
// Process Capture Evidence) that comparison reads, decoded from JSON by
// this package rather than through the capture package's Go types.
type record struct {
	schemaVersion int64
	completedAt   time.Time
	contractSHA   string
	normalization any
	truncated     bool
	residual      []residual
	lists         map[string][]any // the collections, each item a JSON object
	exit          map[string]any
	settlement    map[string]any
	filesAfter    []any
	effects       []any
	journal       []journalEntry
}

type residual struct{ scope, reason string }

// journalEntry is one event_journal entry; index is 0 for exit and
// settlement.
type journalEntry struct {
	collection string
	index      int
}

const root = "$.normalized_result"

// recordChecker validates one record, collecting issues.
type recordChecker struct {
	side   string
	issues []Issue
}

func (c *recordChecker) add(path, code, format string, args ...any) {
	if len(c.issues) > maxIssuesPerSide {
		return
	}
	if len(c.issues) == maxIssuesPerSide {
		c.issues = append(c.issues, Issue{Side: c.side, Issue: strictjson.Issue{Path: root, Code: "too_many_issues", Message: fmt.Sprintf("more than %d issues; the rest are not reported", maxIssuesPerSide)}})
		return
	}
	c.issues = append(c.issues, Issue{Side: c.side, Issue: strictjson.Issue{Path: path, Code: code, Message: fmt.Sprintf(format, args...)}})
}

// decodeRecord decodes the normalized_result of a capture envelope to a
// JSON object. It reports an issue and returns nil when that fails.
func (c *recordChecker) decode(e *evidence.Envelope) map[string]any {
	if e.PredicateType != evidence.PredicateProcessCapture {
		c.add("$.predicate_type", "not_a_capture", "predicate_type is %q, not %q: only Process Capture Evidence can be compared",
			strictjson.Truncate(e.PredicateType, 80), evidence.PredicateProcessCapture)
		return nil
	}
	if !evidence.ValidID(e.EvidenceID) {
		c.add("$.evidence_id", "invalid_value", `evidence_id must be "ev_" followed by 64 lowercase hexadecimal characters; parse or seal the envelope first`)
	}
	v, err := decodeJSON(e.NormalizedResult)
	if err != nil {
		c.add(root, "invalid_json", "normalized_result is not one JSON value: %s", strictjson.Truncate(err.Error(), 200))
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		c.add(root, "wrong_type", "the capture record must be an object, not %s", kindName(v))
		return nil
	}
	return m
}

// schemaVersion reads the record's schema_version.
func (c *recordChecker) schemaVersion(m map[string]any) (int64, bool) {
	v, ok := m["schema_version"]
	if !ok {
		c.add(root+".schema_version", "missing_field", "required field is missing")
		return 0, false
	}
	n, ok := integer(v)
	if !ok {
		c.add(root+".schema_version", "wrong_type", "must be an integer, not %s", kindName(v))
		return 0, false
	}
	return n, true
}

// field returns member key of m, reporting it when absent.
func (c *recordChecker) field(m map[string]any, path, key string) (any, bool) {
	v, ok := m[key]
	if !ok {
		c.add(path+keyPath(key), "missing_field", "required field is missing")
	}
	return v, ok
}

func (c *recordChecker) object(v any, path string) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		c.add(path, "wrong_type", "must be an object, not %s", kindName(v))
	}
	return m, ok
}

func (c *recordChecker) array(v any, path string) ([]any, bool) {
	a, ok := v.([]any)
	if !ok {
		c.add(path, "wrong_type", "must be an array, not %s", kindName(v))
	}
	return a, ok
}

func (c *recordChecker) str(v any, path string) (string, bool) {
	s, ok := v.(string)
	if !ok {
		c.add(path, "wrong_type", "must be a string, not %s", kindName(v))
	}
	return s, ok
}

func (c *recordChecker) boolean(v any, path string) (bool, bool) {
	b, ok := v.(bool)
	if !ok {
		c.add(path, "wrong_type", "must be a boolean, not %s", kindName(v))
	}
	return b, ok
}

// natural reads a non-negative integer.
func (c *recordChecker) natural(v any, path string) (int64, bool) {
	n, ok := integer(v)
	if !ok {
		c.add(path, "wrong_type", "must be an integer, not %s", kindName(v))
		return 0, false
	}
	if n < 0 {
		c.add(path, "out_of_range", "must not be negative")
		return 0, false
	}
	return n, true
}

func (c *recordChecker) enum(v any, path string, allowed ...string) (string, bool) {
	s, ok := c.str(v, path)
	if !ok {
		return "", false
	}
	if !slices.Contains(allowed, s) {
		c.add(path, "invalid_value", "%q is not one of %v", strictjson.Truncate(s, 40), allowed)
		return s, false
	}
	return s, true
}

// strAt reads string member key of mm (collected by members) at
// path.key; a missing member was already reported.
func (c *recordChecker) strAt(mm map[string]any, key, path string) (string, bool) {
	v, ok := mm[key]
	if !ok {
		return "", false
	}
	return c.str(v, path+"."+key)
}

// enumAt is strAt for an enumerated string.
func (c *recordChecker) enumAt(mm map[string]any, key, path string, allowed ...string) (string, bool) {
	v, ok := mm[key]
	if !ok {
		return "", false
	}
	return c.enum(v, path+"."+key, allowed...)
}

// members returns the named members of object m, reporting missing ones;
// members present but not named are accepted (the record may grow).
func (c *recordChecker) members(m map[string]any, path string, names ...string) map[string]any {
	out := make(map[string]any, len(names))
	for _, n := range names {
		if v, ok := c.field(m, path, n); ok {
			out[n] = v
		}
	}
	return out
}

// itemFields are the fields docs/formats/capture-record.md gives each collection item.
var itemFields = map[string][]string{
	"frames":                 {"sequence", "at_ms", "data"},
	"rendered_frames":        {"sequence", "at_ms", "columns", "rows", "cursor_x", "cursor_y", "active_buffer", "lines", "serialized_state"},
	"interaction_events":     {"sequence", "scheduled_at_ms", "dispatched_at_ms", "type", "data", "outcome"},
	"process_samples":        {"at_ms", "pid", "parent_pid", "command", "process_group_id", "session_id"},
	"filesystem_checkpoints": {"name", "at_ms", "files", "effects", "truncated"},
	"shim_events":            {"sequence", "at_ms", "command", "route_index", "arguments", "working_directory", "outcome"},
	"protocol_events":        {"sequence", "at_ms", "protocol", "direction", "method", "path", "data", "outcome"},
	"replay_transitions":     {"sequence", "at_ms", "transition_id", "state_before", "state_after", "sensitive_aliases"},
}

// recordFields and manifestFields are the JSON members of the record's
// Go types (backend/capture/record), its one owner.
var (
	recordFields   = crecord.Fields(crecord.Record{})
	manifestFields = crecord.Fields(crecord.Manifest{})
)

// check validates the decoded record m against the record shape and the
// invariants docs/formats/capture-record.md says every reader re-checks, and returns the
// record. It is meaningful only when no issue was added.
func (c *recordChecker) check(m map[string]any) *record {
	r := &record{lists: make(map[string][]any, len(collections))}
	f := c.members(m, root, recordFields...)
	r.schemaVersion, _ = integer(f["schema_version"])
	r.normalization = f["normalization"]
	if v, ok := f["manifest"]; ok {
		c.manifest(v, f, r)
	}
	if v, ok := f["truncated"]; ok {
		r.truncated, _ = c.boolean(v, root+".truncated")
	}
	for _, name := range collections {
		if v, ok := f[name]; ok {
			r.lists[name] = c.collection(name, v)
		}
	}
	if v, ok := f["exit"]; ok {
		r.exit = c.exit(v)
	}
	if v, ok := f["settlement"]; ok {
		r.settlement = c.settlement(v)
	}
	c.checkpoints(r)
	c.shimCalls(r, f)
	for _, name := range []string{"files_before", "files_after", "filesystem_effects"} {
		if v, ok := f[name]; ok {
			a, _ := c.array(v, root+"."+name)
			switch name {
			case "files_after":
				r.filesAfter = a
			case "filesystem_effects":
				r.effects = a
			}
		}
	}
	if v, ok := f["limitations"]; ok {
		a, _ := c.array(v, root+".limitations")
		for i, it := range a {
			c.str(it, indexPath(root+".limitations", i))
		}
	}
	if v, ok := f["residual_unknowns"]; ok {
		a, _ := c.array(v, root+".residual_unknowns")
		for i, it := range a {
			p := indexPath(root+".residual_unknowns", i)
			if o, ok := c.object(it, p); ok {
				mm := c.members(o, p, "scope", "reason")
				scope, _ := c.strAt(mm, "scope", p)
				reason, _ := c.strAt(mm, "reason", p)
				r.residual = append(r.residual, residual{scope, reason})
			}
		}
	}
	if v, ok := f["cleanup"]; ok {
		if o, ok := c.object(v, root+".cleanup"); ok {
			c.members(o, root+".cleanup", "owned_process_group", "temporary_root")
		}
	}
	if v, ok := f["event_journal"]; ok {
		c.journal(v, r)
	}
	return r
}

func (c *recordChecker) manifest(v any, f map[string]any, r *record) {
	const mp = root + ".manifest"
	o, ok := c.object(v, mp)
	if !ok {
		return
	}
	mf := c.members(o, mp, manifestFields...)
	for _, name := range []string{"gatehouse_version", "provider_version", "platform", "architecture", "pty_backend"} {
		if v, ok := mf[name]; ok {
			c.str(v, mp+"."+name)
		}
	}
	var started, completed time.Time
	var okS, okC bool
	if v, ok := mf["started_at"]; ok {
		started, okS = c.timestamp(v, mp+".started_at")
	}
	if v, ok := mf["completed_at"]; ok {
		completed, okC = c.timestamp(v, mp+".completed_at")
	}
	if okS && okC && started.After(completed) {
		c.add(mp+".completed_at", "invalid_value", "completed_at is before started_at")
	}
	r.completedAt = completed
	commitments := []struct{ sha, value string }{
		{"full_scenario_sha256", "scenario"},
		{"comparison_contract_sha256", "comparison_contract"},
		{"shim_plan_sha256", "shim_plan"},
		{"replay_plan_sha256", "replay_plan"},
		{"normalization_sha256", ""}, // the record's normalization
		{"executable_sha256", "-"},   // the executable's bytes: not checkable here
	}
	for _, cm := range commitments {
		v, ok := mf[cm.sha]
		if !ok {
			continue
		}
		p := mp + "." + cm.sha
		s, ok := c.str(v, p)
		if !ok {
			continue
		}
		if !strictjson.IsHex64(s) {
			c.add(p, "invalid_value", "must be 64 lowercase hexadecimal characters")
			continue
		}
		if cm.sha == "comparison_contract_sha256" {
			r.contractSHA = s
		}
		var value any
		var present bool
		switch cm.value {
		case "-":
			continue
		case "":
			value, present = f["normalization"]
		default:
			value, present = mf[cm.value]
		}
		if !present {
			continue
		}
		d, err := evidence.Digest(value)
		if err != nil {
			c.add(p, "commitment_mismatch", "the committed value cannot be canonicalized: %s", strictjson.Truncate(err.Error(), 120))
		} else if d != s {
			c.add(p, "commitment_mismatch", "is %s but the committed value hashes to %s", s, d)
		}
	}
}

func (c *recordChecker) timestamp(v any, path string) (time.Time, bool) {
	s, ok := c.str(v, path)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		c.add(path, "invalid_value", "%q is not an RFC 3339 timestamp", strictjson.Truncate(s, 40))
		return time.Time{}, false
	}
	return t, true
}

// collection checks one observation list: objects with the spec's fields,
// sequences 0, 1, 2, … and non-decreasing at_ms where items are sequenced.
func (c *recordChecker) collection(name string, v any) []any {
	path := root + "." + name
	items, ok := c.array(v, path)
	if !ok {
		return nil
	}
	var last int64
	for i, it := range items {
		before := last
		if !c.item(name, it, i, &last, false) { // quick check; paths only on failure
			last = before
			c.item(name, it, i, &last, true)
		}
	}
	return items
}

// item checks item i of collection name, updating last (the previous
// at_ms). With report false it only says whether the item is valid;
// with report true it also adds an issue, with its path, for each fault.
func (c *recordChecker) item(name string, it any, i int, last *int64, report bool) bool {
	ok := true
	bad := func(suffix, code, format string, args ...any) {
		ok = false
		if report {
			c.add(indexPath(root+"."+name, i)+suffix, code, format, args...)
		}
	}
	o, isObj := it.(map[string]any)
	if !isObj {
		bad("", "wrong_type", "must be an object, not %s", kindName(it))
		return false
	}
	fields := itemFields[name]
	for _, f := range fields {
		if _, has := o[f]; !has {
			bad(keyPath(f), "missing_field", "required field is missing")
		}
	}
	nat := func(f string) (int64, bool) {
		v, has := o[f]
		if !has {
			return 0, false
		}
		n, isInt := integer(v)
		if !isInt {
			bad("."+f, "wrong_type", "must be an integer, not %s", kindName(v))
			return 0, false
		}
		if n < 0 {
			bad("."+f, "out_of_range", "must not be negative")
			return 0, false
		}
		return n, true
	}
	typed := func(f, want string) {
		v, has := o[f]
		if !has {
			return
		}
		var good bool
		switch want {
		case "string":
			_, good = v.(string)
		case "array":
			_, good = v.([]any)
		case "boolean":
			_, good = v.(bool)
		}
		if !good {
			bad("."+f, "wrong_type", "must be %s %s, not %s", strictjson.Article(want), want, kindName(v))
		}
	}
	enum := func(f string, allowed ...string) {
		v, has := o[f]
		if !has {
			return
		}
		s, isStr := v.(string)
		if !isStr {
			bad("."+f, "wrong_type", "must be a string, not %s", kindName(v))
		} else if !slices.Contains(allowed, s) {
			bad("."+f, "invalid_value", "%q is not one of %v", strictjson.Truncate(s, 40), allowed)
		}
	}
	sequenced := fields[0] == "sequence"
	if sequenced {
		if n, good := nat("sequence"); good && n != int64(i) {
			bad(".sequence", "invalid_value", "sequence is %d; sequences run 0, 1, 2, … so this one must be %d", n, i)
		}
	}
	if n, good := nat("at_ms"); good && sequenced {
		if n < *last {
			bad(".at_ms", "invalid_value", "at_ms %d is earlier than the previous item's %d", n, *last)
		}
		*last = n
	}
	switch name {
	case "frames":
		typed("data", "string")
	case "rendered_frames":
		enum("active_buffer", "normal", "alternate")
		typed("lines", "array")
	case "interaction_events":
		nat("scheduled_at_ms")
		nat("dispatched_at_ms")
		enum("type", "input", "resize", "stdin_close", "signal")
		enum("outcome", "dispatched", "target_exited", "failed")
	case "filesystem_checkpoints":
		typed("name", "string")
		typed("files", "array")
		typed("effects", "array")
		typed("truncated", "boolean")
	case "shim_events":
		enum("outcome", "matched", "unmatched", "exhausted")
	case "protocol_events":
		enum("protocol", "http", "websocket")
		enum("direction", "request", "response", "received", "sent")
	}
	return ok
}

func (c *recordChecker) exit(v any) map[string]any {
	const p = root + ".exit"
	o, ok := c.object(v, p)
	if !ok {
		return nil
	}
	mm := c.members(o, p, "code", "signal", "reason")
	reason, _ := c.enumAt(mm, "reason", p, "exited", "timeout", "idle_timeout")
	if code, ok := mm["code"]; ok && code != nil {
		if _, ok := integer(code); !ok {
			c.add(p+".code", "wrong_type", "must be an integer or null, not %s", kindName(code))
		} else if reason != "" && reason != "exited" {
			c.add(p+".code", "invalid_value", "an exit code is recorded only when reason is exited, not %s", reason)
		}
	}
	if sig, ok := mm["signal"]; ok && sig != nil {
		c.str(sig, p+".signal")
	}
	return o
}

func (c *recordChecker) settlement(v any) map[string]any {
	const p = root + ".settlement"
	o, ok := c.object(v, p)
	if !ok {
		return nil
	}
	mm := c.members(o, p, "state", "elapsed_ms", "cleanup_outcome")
	state, okS := c.enumAt(mm, "state", p, "quiesced", "alive_at_deadline", "unverifiable")
	if e, ok := mm["elapsed_ms"]; ok {
		c.natural(e, p+".elapsed_ms")
	}
	outcome, okO := c.enumAt(mm, "cleanup_outcome", p, "not_required", "cleaned", "failed")
	if okS && okO {
		if state == "quiesced" && outcome != "not_required" {
			c.add(p+".cleanup_outcome", "invalid_value", "a quiesced settlement has cleanup_outcome not_required, not %s", outcome)
		}
		if state != "quiesced" && outcome == "not_required" {
			c.add(p+".cleanup_outcome", "invalid_value", "a %s settlement has cleanup_outcome cleaned or failed", state)
		}
	}
	return o
}

// checkpoints checks that checkpoints start with before and end with
// after_settlement, and that a truncated checkpoint truncates the capture.
func (c *recordChecker) checkpoints(r *record) {
	const p = root + ".filesystem_checkpoints"
	cps, ok := r.lists["filesystem_checkpoints"]
	if !ok {
		return
	}
	name := func(i int) string {
		if o, ok := cps[i].(map[string]any); ok {
			s, _ := o["name"].(string)
			return s
		}
		return ""
	}
	if len(cps) == 0 {
		c.add(p, "invalid_value", "a capture always has the before and after_settlement checkpoints")
		return
	}
	if name(0) != "before" {
		c.add(indexPath(p, 0)+".name", "invalid_value", "the first checkpoint must be before")
	}
	if name(len(cps)-1) != "after_settlement" {
		c.add(indexPath(p, len(cps)-1)+".name", "invalid_value", "the last checkpoint must be after_settlement")
	}
	for i, cp := range cps {
		if o, ok := cp.(map[string]any); ok && o["truncated"] == true && !r.truncated {
			c.add(indexPath(p, i)+".truncated", "invalid_value", "a truncated checkpoint truncates the capture, but the record's truncated is false")
		}
	}
}

// shimCalls checks that matched shim calls stay within each route's
// max_calls as the manifest's shim_plan declares it (when the plan has the
// scenario's command_shims shape).
func (c *recordChecker) shimCalls(r *record, f map[string]any) {
	mo, _ := f["manifest"].(map[string]any)
	plan, _ := mo["shim_plan"].([]any)
	maxCalls := map[string][]int64{}
	for _, s := range plan {
		so, _ := s.(map[string]any)
		name, _ := so["name"].(string)
		routes, _ := so["routes"].([]any)
		for _, rt := range routes {
			ro, _ := rt.(map[string]any)
			n, ok := integer(ro["max_calls"])
			if !ok {
				n = 1
			}
			maxCalls[name] = append(maxCalls[name], n)
		}
	}
	used := map[string]int64{}
	for i, ev := range r.lists["shim_events"] {
		o, _ := ev.(map[string]any)
		if o["outcome"] != "matched" {
			continue
		}
		cmd, _ := o["command"].(string)
		ri, ok := integer(o["route_index"])
		if !ok {
			continue
		}
		routes, known := maxCalls[cmd]
		if !known {
			continue
		}
		ip := indexPath(root+".shim_events", i)
		if ri < 0 || ri >= int64(len(routes)) {
			c.add(ip+".route_index", "invalid_value", "route %d does not exist in the shim plan for %q", ri, strictjson.Truncate(cmd, 64))
			continue
		}
		k := cmd + "\x00" + strconv.FormatInt(ri, 10)
		used[k]++
		if used[k] == routes[ri]+1 {
			c.add(ip, "invalid_value", "more matched calls of %q route %d than its max_calls %d", strictjson.Truncate(cmd, 64), ri, routes[ri])
		}
	}
}

// journal checks the event journal: capture_order 0, 1, 2, …, known
// collections and indexes, and — when it is not empty — every observation
// listed exactly once.
func (c *recordChecker) journal(v any, r *record) {
	const p = root + ".event_journal"
	items, ok := c.array(v, p)
	if !ok {
		return
	}
	seen := make(map[string][]bool, len(collections)+2)
	for _, name := range collections {
		seen[name] = make([]bool, len(r.lists[name]))
	}
	seen["exit"], seen["settlement"] = make([]bool, 1), make([]bool, 1)
	r.journal = make([]journalEntry, 0, len(items))
	for i, it := range items {
		bad := func(suffix, code, format string, args ...any) {
			c.add(indexPath(p, i)+suffix, code, format, args...)
		}
		o, ok := it.(map[string]any)
		if !ok {
			bad("", "wrong_type", "must be an object, not %s", kindName(it))
			continue
		}
		for _, fld := range []string{"capture_order", "collection", "index"} {
			if _, ok := o[fld]; !ok {
				bad("."+fld, "missing_field", "required field is missing")
			}
		}
		if co, ok := o["capture_order"]; ok {
			if n, ok := integer(co); !ok || n != int64(i) {
				bad(".capture_order", "invalid_value", "capture_order runs 0, 1, 2, … so this one must be %d", i)
			}
		}
		cv, okN := o["collection"]
		name, isStr := cv.(string)
		if okN && !isStr {
			bad(".collection", "wrong_type", "must be a string, not %s", kindName(cv))
		}
		iv, okI := o["index"]
		idx, isInt := integer(iv)
		if okI && (!isInt || idx < 0) {
			bad(".index", "wrong_type", "must be a non-negative integer")
		}
		if !okN || !isStr || !okI || !isInt || idx < 0 {
			continue
		}
		marks, known := seen[name]
		if !known {
			bad(".collection", "invalid_value", "%q is not a journaled collection", strictjson.Truncate(name, 40))
			continue
		}
		if idx >= int64(len(marks)) {
			bad(".index", "invalid_value", "%s has no item %d", name, idx)
			continue
		}
		if marks[idx] {
			bad("", "invalid_value", "%s[%d] is listed more than once", name, idx)
			continue
		}
		marks[idx] = true
		r.journal = append(r.journal, journalEntry{name, int(idx)})
	}
	if len(items) == 0 {
		return
	}
	for _, name := range append(slices.Clone(collections), "exit", "settlement") {
		for i, ok := range seen[name] {
			if !ok {
				at := root + "." + name
				if name != "exit" && name != "settlement" {
					at = indexPath(at, i)
				}
				c.add(at, "not_journaled", "the event journal does not list this observation")
			}
		}
	}
}

// rawJSON re-encodes a decoded value (for messages and fixtures).
func rawJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}
