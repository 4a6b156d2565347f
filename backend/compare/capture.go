package compare

import (
	"fmt"

	crecord "github.com/gatehouse/gatehouse/backend/capture/record"
	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// Capture is one side of a comparison: the evidence_id of a Process
// Capture envelope and the proof (record.Verified) that the envelope's
// record passed record.Verify. CompareCaptures and DiffsCaptures read the
// record only from the proof, so they compare exactly the bytes that were
// verified, and verify nothing again.
//
// Make one with NewCapture (from a proof the caller already has, such as
// the evidence library's) or CheckCaptures (which verifies). The zero
// Capture holds no record and is refused.
type Capture struct {
	id  string
	rec crecord.Verified
}

// EvidenceID returns the evidence_id of the capture's envelope.
func (c Capture) EvidenceID() string { return c.id }

// NewCapture pairs env with rec, the proof that env's record passed
// record.Verify, without verifying it again. It fails with
// CodeInvalidCapture when env is nil or not Process Capture Evidence, when
// its evidence_id is malformed, when rec is not a proof (the zero
// Verified) or when rec does not hold exactly env.NormalizedResult (a
// proof of other bytes, or a record changed after it was verified).
//
// NewCapture does not recompute the evidence_id: obtain env from
// evidence.Parse, which does, or from evidence.Seal.
func NewCapture(env *evidence.Envelope, rec crecord.Verified) (Capture, error) {
	if env == nil {
		return Capture{}, newError(CodeInvalidCapture, []Issue{{Issue: strictjson.Issue{Path: "$", Code: "missing", Message: "no envelope"}}})
	}
	c := &recordReader{}
	if c.envelope(env) {
		switch {
		case !rec.Valid():
			c.add(root, "unverified", "the record comes with no proof that record.Verify accepted it")
		case !rec.Holds(env.NormalizedResult):
			c.add(root, "unverified", "the record is not the one that was verified (it changed, or the proof is another record's)")
		}
	}
	if len(c.issues) > 0 {
		return Capture{}, newError(CodeInvalidCapture, c.issues)
	}
	return Capture{id: env.EvidenceID, rec: rec}, nil
}

// CheckCaptures verifies the records of left and right with record.Check,
// once each (in parallel), and pairs each envelope with its proof: the
// way to CompareCaptures for a caller that has no proof. It reports every
// issue of both sides together, Side "left" or "right", paths under
// $.normalized_result.
//
// Preconditions, checked in this order, each failing with an *Error: both
// envelopes are given (CodeInvalidRequest); both are Process Capture
// Evidence with a well-formed evidence_id (CodeInvalidCapture); their
// records are JSON objects (CodeInvalidCapture); their schema_version
// values are equal (CodeIncompatibleSchemaVersions) and 4
// (CodeUnsupportedSchemaVersion); and both records pass record.Verify
// (CodeInvalidCapture, every failing path). A record that passes is
// decoded only by record.Verify; the others are decoded once more to tell
// the earlier preconditions apart.
func CheckCaptures(left, right *evidence.Envelope) (Capture, Capture, error) {
	if left == nil || right == nil {
		var issues []Issue
		if left == nil {
			issues = append(issues, Issue{Side: "left", Issue: strictjson.Issue{Path: "$", Code: "missing", Message: "no left envelope"}})
		}
		if right == nil {
			issues = append(issues, Issue{Side: "right", Issue: strictjson.Issue{Path: "$", Code: "missing", Message: "no right envelope"}})
		}
		return Capture{}, Capture{}, newError(CodeInvalidRequest, issues)
	}
	lc, rc := &recordReader{side: "left"}, &recordReader{side: "right"}
	okL, okR := lc.envelope(left), rc.envelope(right)
	if !okL || !okR {
		return Capture{}, Capture{}, newError(CodeInvalidCapture, append(lc.issues, rc.issues...))
	}
	var rv crecord.Verified
	var rIssues []crecord.Issue
	done := make(chan struct{})
	go func() { // the two sides are independent: verify them in parallel
		defer close(done)
		rv, rIssues = crecord.Check(right.NormalizedResult)
	}()
	lv, lIssues := crecord.Check(left.NormalizedResult)
	<-done
	if len(lIssues) > 0 || len(rIssues) > 0 {
		if err := preconditions(left, right, lc, rc); err != nil {
			return Capture{}, Capture{}, err
		}
		lc.verifyIssues(lIssues)
		rc.verifyIssues(rIssues)
	}
	if len(lc.issues)+len(rc.issues) > 0 {
		return Capture{}, Capture{}, newError(CodeInvalidCapture, append(lc.issues, rc.issues...))
	}
	return Capture{id: left.EvidenceID, rec: lv}, Capture{id: right.EvidenceID, rec: rv}, nil
}

// preconditions tells apart, for a pair record.Verify refused, the
// failures that come before its issues: a record that is not a JSON
// object, and schema versions that differ or are not this Gatehouse's.
func preconditions(left, right *evidence.Envelope, lc, rc *recordReader) error {
	lm, rm := lc.decode(left), rc.decode(right)
	if lm == nil || rm == nil {
		return newError(CodeInvalidCapture, append(lc.issues, rc.issues...))
	}
	lv, okL := lc.schemaVersion(lm)
	rv, okR := rc.schemaVersion(rm)
	if !okL || !okR {
		return newError(CodeInvalidCapture, append(lc.issues, rc.issues...))
	}
	if lv != rv {
		const p = root + ".schema_version"
		return newError(CodeIncompatibleSchemaVersions, []Issue{
			{Side: "left", Issue: strictjson.Issue{Path: p, Code: "schema_version", Message: fmt.Sprintf("left record has schema_version %d", lv)}},
			{Side: "right", Issue: strictjson.Issue{Path: p, Code: "schema_version", Message: fmt.Sprintf("right record has schema_version %d", rv)}},
		})
	}
	if lv != crecord.SchemaVersion {
		return newError(CodeUnsupportedSchemaVersion, []Issue{{Issue: strictjson.Issue{Path: root + ".schema_version", Code: "schema_version",
			Message: fmt.Sprintf("both records have schema_version %d; this Gatehouse reads %d", lv, crecord.SchemaVersion)}}})
	}
	return nil
}

// readCaptures reads both sides' records from their proofs (in parallel),
// refusing a zero Capture (CodeInvalidRequest).
func readCaptures(left, right Capture) (*record, *record, error) {
	var issues []Issue
	for i, c := range []Capture{left, right} {
		if !c.rec.Valid() {
			issues = append(issues, Issue{Side: sideName(i), Issue: strictjson.Issue{Path: "$", Code: "unverified",
				Message: fmt.Sprintf("no verified %s capture: make it with NewCapture or CheckCaptures", sideName(i))}})
		}
	}
	if issues != nil {
		return nil, nil, newError(CodeInvalidRequest, issues)
	}
	var rr *record
	var rerr error
	done := make(chan struct{})
	go func() { // the two sides are independent: decode them in parallel
		defer close(done)
		rr, rerr = readVerified(right.rec)
	}()
	lr, lerr := readVerified(left.rec)
	<-done
	if lerr != nil {
		return nil, nil, lerr
	}
	if rerr != nil {
		return nil, nil, rerr
	}
	return lr, rr, nil
}
