package app

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"time"

	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/store"
)

// checkedEvidence is Evidence bytes that passed full verification just
// now: the strict envelope with its evidence_id recomputed and, for a
// process capture, every commitment and invariant of the record
// (verifyEvidence). Only checkEvidence makes one, and saveAndIndexEvidence
// saves nothing else, so every file entering the library was checked,
// and its verification mark names the bytes that were.
type checkedEvidence struct {
	data []byte
	sum  [sha256.Size]byte
	env  *evidence.Envelope
	res  EvidenceVerifyResult
}

// checkEvidence verifies data in full (parseVerifiedEvidence); on
// success the result may be saved with saveAndIndexEvidence.
func checkEvidence(data []byte) (checkedEvidence, []evidenceIssue) {
	env, res, issues := parseVerifiedEvidence(data)
	if len(issues) > 0 {
		return checkedEvidence{}, issues
	}
	return checkedEvidence{data: data, sum: sha256.Sum256(data), env: env, res: res}, nil
}

// checkForSave is checkEvidence for Evidence Gatehouse has just made
// (sealed) with the id want: a failure is an internal error naming every
// failing path, and nothing is saved.
func checkForSave(data []byte, want string) (checkedEvidence, error) {
	c, issues := checkEvidence(data)
	return forSave(c, issues, want)
}

// checkParsedForSave is checkForSave for bytes evidence.SealParsed has
// just written and parsed as evidence.Parse does: its parse stands for
// the first half of the check, and the rest (the record) is run here.
func checkParsedForSave(data []byte, parsed *evidence.Envelope, want string) (checkedEvidence, error) {
	if parsed == nil {
		return checkedEvidence{}, errorf("internal", CategoryInternal, "the sealed Evidence %s has no parse to verify", want)
	}
	res, issues := verifyParsed(parsed)
	c := checkedEvidence{}
	if len(issues) == 0 {
		c = checkedEvidence{data: data, sum: sha256.Sum256(data), env: parsed, res: res}
	}
	return forSave(c, issues, want)
}

func forSave(c checkedEvidence, issues []evidenceIssue, want string) (checkedEvidence, error) {
	if len(issues) == 0 && c.res.EvidenceID != want {
		issues = []evidenceIssue{{Code: "evidence_id_mismatch", Path: "$.evidence_id",
			Message: fmt.Sprintf("the sealed Evidence %s holds %s", want, c.res.EvidenceID)}}
	}
	if len(issues) > 0 {
		return checkedEvidence{}, &CLIError{Code: "evidence_integrity_mismatch", Category: CategoryInternal, Details: issues,
			Message: fmt.Sprintf("the Evidence %s does not verify, so it was not saved: %d failing path(s)", want, len(issues))}
	}
	return c, nil
}

// saveAndIndexEvidence saves the checked Evidence (saveEvidence) and
// indexes it with e's predicate, operation and summary; EvidenceID is
// the checked one, and Path, Size and CreatedAt are set here. If
// indexing fails the saved file is removed, so nothing is left
// half-saved. The file is then marked verified (verifiedMarkNamespace)
// by the SHA-256 of the exact bytes written and this executable, so
// opening it later costs a hash, whichever path saved it (CLI, agent,
// app, import). It returns the entry as indexed.
func saveAndIndexEvidence(ctx context.Context, env *Env, e store.EvidenceEntry, c checkedEvidence) (store.EvidenceEntry, error) {
	if c.data == nil || c.res.EvidenceID == "" {
		return store.EvidenceEntry{}, errorf("internal", CategoryInternal, "refusing to save Evidence that was not verified")
	}
	e.EvidenceID = c.res.EvidenceID
	path, err := saveEvidence(env.DataDir, e.EvidenceID, c.data)
	if err != nil {
		return store.EvidenceEntry{}, err
	}
	e.Path, e.Size, e.CreatedAt = path, int64(len(c.data)), time.Now()
	if err := env.DB.IndexEvidence(ctx, e); err != nil {
		os.Remove(path) // nothing half-saved
		return store.EvidenceEntry{}, errorf("evidence_not_indexed", CategoryIO, "%v", err)
	}
	env.markVerified(ctx, c.sum, c.res)
	return e, nil
}
