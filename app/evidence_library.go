package app

import (
	"github.com/gatehouse/gatehouse/backend/library"
)

// EvidenceVerifyResult is what `evidence verify` prints on success and
// what a read of saved Evidence re-checked (library.Result).
type EvidenceVerifyResult = library.Result

// evidenceIssue is one failing path of `evidence verify` and of the
// library's checks.
type evidenceIssue = library.Issue

// lib is the evidence library of this data directory (backend/library):
// one per Env, so the CLI, the app and agents share its cache and marks.
func (e *Env) lib() *library.Library {
	e.libMu.Lock()
	defer e.libMu.Unlock()
	if e.evlib == nil {
		e.evlib = library.New(library.Config{DB: e.DB, DataDir: e.DataDir, Verifier: e.verifierID, Warnings: e.Stderr})
	}
	return e.evlib
}

// libError is err as the app's structured error: a *library.Error keeps
// its code, its kind as the category and its issues as details; any
// other error (nil, or an os error a caller tests with errors.Is) is
// returned as it is.
func libError(err error) error {
	le, ok := library.AsError(err)
	if !ok {
		return err
	}
	ce := &CLIError{Code: le.Code, Category: string(le.Kind), Message: le.Message}
	if len(le.Issues) > 0 {
		ce.Details = le.Issues
	}
	return ce
}

// readBounded reads a file of at most max bytes (library.ReadBounded).
func readBounded(path string, max int64) ([]byte, error) {
	b, err := library.ReadBounded(path, max)
	return b, libError(err)
}
