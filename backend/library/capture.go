package library

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gatehouse/gatehouse/backend/capture/record"
	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/internal/contentcache"
)

// The proofs (record.Verified) of the capture records a Library verified
// are kept in memory by the SHA-256 of their file's exact bytes, so that
// comparing a capture does not verify its record again: at most
// proofCacheSize of them and proofCacheBytes of record bytes (a proof
// holds its record).
const (
	proofCacheSize  = 8
	proofCacheBytes = evidence.MaxEnvelopeBytes
)

func newProofCache() *contentcache.Cache[[sha256.Size]byte, record.Verified] {
	return contentcache.New[[sha256.Size]byte, record.Verified](contentcache.Limits{MaxEntries: proofCacheSize, MaxBytes: proofCacheBytes})
}

// remember keeps what a full verification of the bytes with digest sum
// found: r, without its proof, in the results cache, and the proof in the
// proof cache.
func (l *Library) remember(sum [sha256.Size]byte, r Result) {
	l.keepProof(sum, r.record)
	r.record = record.Verified{}
	l.verified.Add(sum, r, 0)
}

// keepProof keeps p, a proof of the record of the bytes with digest sum
// (nothing for the zero Verified).
func (l *Library) keepProof(sum [sha256.Size]byte, p record.Verified) {
	if p.Valid() {
		l.proofs.Add(sum, p, int64(len(p.JSON())))
	}
}

// OpenedCapture is a saved process capture as OpenCapture read it.
type OpenedCapture struct {
	Opened
	// Envelope is the decoded envelope of Data.
	Envelope *evidence.Envelope
	// Record is the proof that Envelope.NormalizedResult passed
	// record.Verify: a reader of the record (compare.NewCapture) needs no
	// other check.
	Record record.Verified
}

// OpenCapture is Open for a saved process capture whose record is to be
// read: besides the verified bytes it returns their envelope and the
// proof (record.Verified) that the envelope's record passed
// record.Verify. The proof is the one Open's own verification made, or
// one kept in memory from an earlier verification of the same bytes (by
// their SHA-256); only bytes Open accepted by their verification mark
// have their record verified here, once, and the proof is kept. Evidence
// of another predicate is not_a_capture; Open's errors are returned as
// they are.
func (l *Library) OpenCapture(ctx context.Context, id string) (OpenedCapture, error) {
	o, err := l.Open(ctx, id)
	if err != nil {
		return OpenedCapture{}, err
	}
	if o.Result.PredicateType != evidence.PredicateProcessCapture {
		return OpenedCapture{}, &Error{Code: "not_a_capture", Kind: KindInvalid,
			Message: fmt.Sprintf("%s is %s Evidence, not a process capture", id, o.Result.PredicateType)}
	}
	// The bytes passed evidence.Parse (strict JSON, evidence_id
	// recomputed), now or when they were marked, so a plain decode gives
	// the same envelope at a fraction of a strict parse's cost.
	var env evidence.Envelope
	if err := json.Unmarshal(o.Data, &env); err != nil {
		return OpenedCapture{}, errorf("internal", KindInternal, "decode verified Evidence %s: %v", id, err)
	}
	proof := o.Result.record
	if !proof.Holds(env.NormalizedResult) {
		proof, _ = l.proofs.Get(o.Sum)
	}
	if !proof.Holds(env.NormalizedResult) {
		var issues []record.Issue
		if proof, issues = record.Check(env.NormalizedResult); len(issues) > 0 {
			// The mark vouched for bytes this verifier refuses now: never
			// hand them out.
			return OpenedCapture{}, &Error{Code: "evidence_integrity_mismatch", Kind: KindInvalid, Issues: recordIssues(issues),
				Message: fmt.Sprintf("the saved Evidence %s no longer verifies: %d failing path(s)", id, len(issues))}
		}
		l.keepProof(o.Sum, proof)
	}
	o.Result.record = record.Verified{}
	return OpenedCapture{Opened: o, Envelope: &env, Record: proof}, nil
}

// recordIssues are record.Verify's issues with paths from the envelope's
// root.
func recordIssues(issues []record.Issue) []Issue {
	out := make([]Issue, 0, len(issues))
	for _, is := range issues {
		out = append(out, Issue{Code: is.Code, Path: "$.normalized_result" + strings.TrimPrefix(is.Path, "$"), Message: is.Message})
	}
	return out
}
