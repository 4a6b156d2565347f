package compare

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	crecord "github.com/gatehouse/gatehouse/backend/capture/record"
	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// maxIssuesPerSide bounds the issues reported for one record, so a large
// broken capture does not produce an unbounded error (record.Verify's
// bound, strictjson.DefaultMaxIssues, with its too_many_issues issue).
const maxIssuesPerSide = strictjson.DefaultMaxIssues

// The record lists that hold journaled observations, in record order.
var collections = crecord.ObservationLists()

// record is the part of a capture record (the normalized_result of
// Process Capture Evidence) that comparison reads. Its values come from
// compare's lenient decoder (jsonparse.go) after record.Verify, the one
// check of the record, accepted the same bytes: every member read here
// exists and has its type.
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

// recordReader reads one side's record, collecting its issues.
type recordReader struct {
	side   string
	issues []Issue
}

func (c *recordReader) add(path, code, format string, args ...any) {
	c.issues = append(c.issues, Issue{Side: c.side, Issue: strictjson.Issue{Path: path, Code: code, Message: fmt.Sprintf(format, args...)}})
}

// envelope checks that e is Process Capture Evidence with a well-formed
// evidence_id, reporting an issue for each that is not; false means e is
// not a capture at all.
func (c *recordReader) envelope(e *evidence.Envelope) bool {
	if e.PredicateType != evidence.PredicateProcessCapture {
		c.add("$.predicate_type", "not_a_capture", "predicate_type is %q, not %q: only Process Capture Evidence can be compared",
			strictjson.Truncate(e.PredicateType, 80), evidence.PredicateProcessCapture)
		return false
	}
	if !evidence.ValidID(e.EvidenceID) {
		c.add("$.evidence_id", "invalid_value", `evidence_id must be "ev_" followed by 64 lowercase hexadecimal characters; parse or seal the envelope first`)
	}
	return true
}

// decode decodes the normalized_result of a capture envelope to a JSON
// object, to name why record.Verify refused it (see CheckCaptures). It
// reports an issue and returns nil when that fails.
func (c *recordReader) decode(e *evidence.Envelope) map[string]any {
	v, err := decodeJSON(string(e.NormalizedResult))
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

// schemaVersion reads the record's schema_version, so that two versions
// are told apart before either record is checked.
func (c *recordReader) schemaVersion(m map[string]any) (int64, bool) {
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

// verifyIssues adds record.Verify's issues, each path under
// $.normalized_result, as the side's issues.
func (c *recordReader) verifyIssues(issues []crecord.Issue) {
	for _, is := range issues {
		c.issues = append(c.issues, Issue{Side: c.side, Issue: strictjson.Issue{Path: root + strings.TrimPrefix(is.Path, "$"), Code: is.Code, Message: is.Message}})
	}
}

// readVerified decodes and reads a record that record.Verify accepted
// (v is the proof). The decode cannot fail on such a record; if it did,
// the error says so rather than comparing anything.
func readVerified(v crecord.Verified) (*record, error) {
	d, err := decodeJSON(v.JSON())
	m, ok := d.(map[string]any)
	if err != nil || !ok {
		return nil, fmt.Errorf("compare: a verified record does not decode to an object: %v", err)
	}
	return readRecord(m), nil
}

// readRecord reads a record that record.Verify accepted.
func readRecord(m map[string]any) *record {
	r := &record{lists: make(map[string][]any, len(collections))}
	r.schemaVersion, _ = integer(m["schema_version"])
	r.normalization = m["normalization"]
	r.truncated, _ = m["truncated"].(bool)
	mf, _ := m["manifest"].(map[string]any)
	if s, ok := mf["completed_at"].(string); ok {
		r.completedAt, _ = time.Parse(time.RFC3339Nano, s)
	}
	r.contractSHA, _ = mf["comparison_contract_sha256"].(string)
	for _, name := range collections {
		r.lists[name], _ = m[name].([]any)
	}
	r.exit, _ = m["exit"].(map[string]any)
	r.settlement, _ = m["settlement"].(map[string]any)
	r.filesAfter, _ = m["files_after"].([]any)
	r.effects, _ = m["filesystem_effects"].([]any)
	residuals, _ := m["residual_unknowns"].([]any)
	for _, it := range residuals {
		o, _ := it.(map[string]any)
		scope, _ := o["scope"].(string)
		reason, _ := o["reason"].(string)
		r.residual = append(r.residual, residual{scope, reason})
	}
	journal, _ := m["event_journal"].([]any)
	r.journal = make([]journalEntry, 0, len(journal))
	for _, it := range journal {
		o, _ := it.(map[string]any)
		name, _ := o["collection"].(string)
		idx, _ := integer(o["index"])
		r.journal = append(r.journal, journalEntry{name, int(idx)})
	}
	return r
}

// rawJSON re-encodes a decoded value (for messages and fixtures).
func rawJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}
