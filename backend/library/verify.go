package library

import (
	"github.com/gatehouse/gatehouse/backend/attest"
	"github.com/gatehouse/gatehouse/backend/capture/record"
	"github.com/gatehouse/gatehouse/backend/evidence"
)

// Issue is one failing path of a verification: a stable code, the JSON
// path from the envelope's root ($.normalized_result… for the record) and
// a message.
type Issue = evidence.Issue

// Result is what a verification that passed found: the envelope's id and
// predicate and whether its record was checked too.
type Result struct {
	Valid         bool   `json:"valid"`
	EvidenceID    string `json:"evidence_id"`
	PredicateType string `json:"predicate_type"`
	// RecordVerified says whether normalized_result was checked as a
	// capture record (only for gatehouse.process-capture/v4).
	RecordVerified bool `json:"record_verified"`
	// Attestation is a verified attestation of the same bytes, set only
	// by a caller that checked one too (never by this package, and never
	// kept in a verification mark).
	Attestation *attest.Result `json:"attestation,omitempty"`

	record record.Verified // the record's proof, when it was verified in this process (see Record)
}

// Verify checks Evidence bytes in full: the strict envelope and its
// evidence_id (evidence.Parse) and, for a process capture, every
// commitment and invariant of its record (record.Verify). It is a
// pure function of data. Issues are non-empty exactly when it fails.
func Verify(data []byte) (Result, []Issue) {
	_, res, issues := ParseVerified(data)
	return res, issues
}

// ParseVerified is Verify that also returns the parsed envelope (nil when
// there are issues).
func ParseVerified(data []byte) (*evidence.Envelope, Result, []Issue) {
	env, issues := evidence.Parse(data)
	if len(issues) > 0 {
		return nil, Result{}, issues
	}
	res, out := VerifyParsed(env)
	if len(out) > 0 {
		return nil, Result{}, out
	}
	return env, res, nil
}

// VerifyParsed is the rest of Verify for an envelope that passed
// evidence.Parse: for a process capture, every commitment and invariant
// of its record, with paths from the envelope's root.
func VerifyParsed(env *evidence.Envelope) (Result, []Issue) { return verifyParsed(env, nil) }

// verifyParsed is VerifyParsed with the record's issues taken from ahead
// when it checked exactly the envelope's record bytes.
func verifyParsed(env *evidence.Envelope, ahead *RecordCheck) (Result, []Issue) {
	res := Result{Valid: true, EvidenceID: env.EvidenceID, PredicateType: env.PredicateType}
	if env.PredicateType != evidence.PredicateProcessCapture {
		return res, nil
	}
	res.RecordVerified = true
	proof, issues, ok := ahead.checkFor(env.NormalizedResult)
	if !ok {
		proof, issues = record.Check(env.NormalizedResult)
	}
	if len(issues) > 0 {
		return Result{}, recordIssues(issues)
	}
	res.record = proof
	return res, nil
}
