package library

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
)

// verifiedCacheSize is how many verified files a Library remembers in
// memory (Library.verified), by the SHA-256 of their exact bytes.
// Verification is a pure function of those bytes, so a file whose digest
// is listed has already passed it; reading it again costs one hash
// instead of a parse and a record check (seconds for a 10 MB capture). A
// file that changed in any byte has another digest and is verified again
// in full.
const verifiedCacheSize = 8

// MarkNamespace is the store's settings namespace of the verification
// marks: per saved Evidence id, the SHA-256 of the exact bytes that last
// passed full verification and the verifier (the executable's digest)
// that checked them.
//
// Why a mark is as good as a new check: verification is a pure function
// of the file's bytes and of the verifier's code. A saved file whose
// bytes hash to the marked digest, read by the same executable, would
// pass again; any changed byte (or another build of Gatehouse) means a
// full verification. The mark lives in the data directory's database,
// the same store that holds the execution policy and trust rules, so
// whoever could forge a mark could already change what Gatehouse allows.
// The cost of a read of a marked 10 MB capture drops from a strict parse
// and a record check (about 0.6 s of CPU) to one SHA-256 (about 20 ms).
const MarkNamespace = "evidence.verified"

// Mark is one verification mark as stored under MarkNamespace.
type Mark struct {
	SHA256   string `json:"sha256"`
	Verifier string `json:"verifier"`
	Result   Result `json:"result"`
}

// ExecutableDigest identifies the code that verifies: the SHA-256 of the
// running executable, computed once per process (or, with IDKnown, taken
// from the identity kept for it by an earlier process). "" (the
// executable cannot be read)
// turns marks off: every read is then verified in full. Its zero value is
// ready and safe for concurrent use.
type ExecutableDigest struct {
	once sync.Once
	hex  string
}

// runningExecutable is the file this process was started from: the
// kernel's link to the running image, which stays that image when a
// package upgrade renames another build over its path (os.Executable
// names the path, and opening it would hash the new build, so old code's
// marks would carry the new build's digest). Where there is no /proc,
// marks are off.
const runningExecutable = "/proc/self/exe"

// ID returns the digest in lowercase hex, or "" when the running
// executable cannot be read; it hashes the executable (see IDKnown).
func (v *ExecutableDigest) ID() string { return v.IDKnown(nil) }

// Verifier is the digest of the verifying code marks are written and
// trusted under ("" when marks are off).
func (l *Library) Verifier() string { return l.verifier() }

// VerifySaved verifies the bytes of the saved Evidence id: through the
// in-memory cache, then the id's verification mark, then in full. A full
// verification that passes with evidence_id == id marks the file. The
// result's EvidenceID may differ from id (the caller decides); issues
// are non-empty exactly when data does not verify.
func (l *Library) VerifySaved(ctx context.Context, id string, data []byte) (Result, []Issue) {
	return l.VerifySavedSum(ctx, id, data, sha256.Sum256(data))
}

// VerifySavedSum is VerifySaved for a caller that already has the
// SHA-256 of data.
func (l *Library) VerifySavedSum(ctx context.Context, id string, data []byte, sum [sha256.Size]byte) (Result, []Issue) {
	if r, ok := l.verified.Get(sum); ok && r.EvidenceID == id {
		return r, nil
	}
	verifier := l.verifier()
	if m, ok := l.ReadMark(ctx, id); ok && verifier != "" && m.Verifier == verifier && m.SHA256 == hex.EncodeToString(sum[:]) && m.Result.EvidenceID == id {
		l.verified.Add(sum, m.Result, 0)
		return m.Result, nil
	}
	r, issues := l.verifyOnce(sum, data)
	if len(issues) > 0 {
		return r, issues
	}
	l.remember(sum, r)
	if r.EvidenceID == id {
		l.MarkVerified(ctx, sum, r)
	}
	return r, nil
}

// MarkVerified records that the bytes with digest sum passed full
// verification with result r (saved under r.EvidenceID), checked by the
// verifier. A mark that cannot be written only costs a full verification
// on a later read (a warning says so); with no verifier nothing is
// written.
func (l *Library) MarkVerified(ctx context.Context, sum [sha256.Size]byte, r Result) {
	verifier := l.verifier()
	if verifier == "" {
		return
	}
	r.Attestation = nil
	b, err := json.Marshal(Mark{SHA256: hex.EncodeToString(sum[:]), Verifier: verifier, Result: r})
	if err == nil {
		err = l.db.Put(ctx, MarkNamespace, r.EvidenceID, b)
	}
	if err != nil {
		fmt.Fprintf(l.warn, "gatehouse: warning: the verification of %s is not remembered: %v\n", r.EvidenceID, err)
	}
}

// ReadMark returns the verification mark of id, if there is a readable
// one.
func (l *Library) ReadMark(ctx context.Context, id string) (Mark, bool) {
	raw, err := l.db.Get(ctx, MarkNamespace, id)
	if err != nil {
		return Mark{}, false
	}
	var m Mark
	if json.Unmarshal(raw, &m) != nil {
		return Mark{}, false
	}
	return m, true
}

// ForgetMark removes the verification mark of id (its file is deleted,
// or is to be verified in full again).
func (l *Library) ForgetMark(ctx context.Context, id string) error {
	return l.db.Delete(ctx, MarkNamespace, id)
}

// inflight is one full verification in progress; others asking for the
// same bytes wait for its answer instead of verifying them again.
type inflight struct {
	done   chan struct{}
	res    Result
	issues []Issue
}

// verifyOnce runs Verify for data, or waits for the run already
// verifying the same bytes.
func (l *Library) verifyOnce(sum [sha256.Size]byte, data []byte) (Result, []Issue) {
	l.pre.mu.Lock()
	if l.pre.inflight == nil {
		l.pre.inflight = map[[sha256.Size]byte]*inflight{}
	}
	if w, ok := l.pre.inflight[sum]; ok {
		l.pre.mu.Unlock()
		<-w.done
		return w.res, w.issues
	}
	w := &inflight{done: make(chan struct{})}
	l.pre.inflight[sum] = w
	l.pre.mu.Unlock()
	w.res, w.issues = Verify(data)
	l.pre.mu.Lock()
	delete(l.pre.inflight, sum)
	l.pre.mu.Unlock()
	close(w.done)
	return w.res, w.issues
}
