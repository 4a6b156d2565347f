package library

import (
	"bytes"
	"crypto/sha256"
	"fmt"

	"github.com/gatehouse/gatehouse/backend/evidence"
)

// Checked is Evidence bytes that passed full verification just now: the
// strict envelope with its evidence_id recomputed and, for a process
// capture, every commitment and invariant of the record (Verify). Only
// Check, CheckForSave and CheckParsedForSave make one, and Save saves
// nothing else, so every file entering the library was checked, and its
// verification mark names the bytes that were. A Checked holds its own
// copy of the bytes it checked (and Check parses that copy), so a caller
// that changes or reuses its slice afterwards cannot change what Save
// writes: those stay the bytes that passed. The zero value is refused by
// Save.
type Checked struct {
	data []byte
	sum  [sha256.Size]byte
	env  *evidence.Envelope
	res  Result
}

// Envelope is the parsed envelope of the checked bytes (nil for the zero
// value).
func (c Checked) Envelope() *evidence.Envelope { return c.env }

// Result is what the check found.
func (c Checked) Result() Result { return c.res }

// Check verifies data in full (ParseVerified); on success the result may
// be saved with Save. Issues are non-empty exactly when it fails.
func Check(data []byte) (Checked, []Issue) {
	data = bytes.Clone(data) // the parse may keep slices of it
	env, res, issues := ParseVerified(data)
	if len(issues) > 0 {
		return Checked{}, issues
	}
	return Checked{data: data, sum: sha256.Sum256(data), env: env, res: res}, nil
}

// CheckForSave is Check for Evidence Gatehouse has just made (sealed)
// with the id want: a failure is an internal error (code
// evidence_integrity_mismatch) naming every failing path, and nothing is
// saved.
func CheckForSave(data []byte, want string) (Checked, error) {
	c, issues := Check(data)
	return forSave(c, issues, want)
}

// CheckParsedForSave is CheckForSave for bytes evidence.SealParsed has
// just written and parsed as evidence.Parse does: its parse stands for
// the first half of the check, and the rest (the record) is run here.
// The bytes saved are a copy of data taken with the check; parsed stays
// the caller's (Envelope returns it). A nil parse is an internal error.
func CheckParsedForSave(data []byte, parsed *evidence.Envelope, want string) (Checked, error) {
	return CheckParsedForSaveAhead(data, parsed, want, nil)
}

// CheckParsedForSaveAhead is CheckParsedForSave with the record's check
// taken from ahead when ahead checked exactly the parsed envelope's
// record bytes (RecordCheck); otherwise, and for a nil ahead, the record
// is checked here.
func CheckParsedForSaveAhead(data []byte, parsed *evidence.Envelope, want string, ahead *RecordCheck) (Checked, error) {
	if parsed == nil {
		return Checked{}, errorf("internal", KindInternal, "the sealed Evidence %s has no parse to verify", want)
	}
	// The digest of the bytes (the verification mark's) is taken while the
	// record is checked: two passes over 10 MB that need not wait for
	// each other. The bytes are copied first (the saved bytes are the
	// check's own, whatever the caller does with data afterwards), and
	// the digest is of the copy.
	return checkParsedOwn(bytes.Clone(data), parsed, want, ahead)
}

// checkParsedOwn is CheckParsedForSaveAhead of data nobody changes while
// the check, and the save of the Checked, use it (the check's own copy,
// or saveSealed's data).
func checkParsedOwn(data []byte, parsed *evidence.Envelope, want string, ahead *RecordCheck) (Checked, error) {
	return checkParsedDigest(data, parsed, want, ahead, digestOf(data))
}

// digestOf starts taking the SHA-256 of data in its own goroutine.
func digestOf(data []byte) <-chan [sha256.Size]byte {
	sum := make(chan [sha256.Size]byte, 1)
	go func() { sum <- sha256.Sum256(data) }()
	return sum
}

// checkParsedDigest is checkParsedOwn with the digest of data taken by
// digestOf, started by the caller.
func checkParsedDigest(data []byte, parsed *evidence.Envelope, want string, ahead *RecordCheck, sum <-chan [sha256.Size]byte) (Checked, error) {
	res, issues := verifyParsed(parsed, ahead)
	digest := <-sum
	c := Checked{}
	if len(issues) == 0 {
		c = Checked{data: data, sum: digest, env: parsed, res: res}
	}
	return forSave(c, issues, want)
}

func forSave(c Checked, issues []Issue, want string) (Checked, error) {
	if len(issues) == 0 && c.res.EvidenceID != want {
		issues = []Issue{{Code: "evidence_id_mismatch", Path: "$.evidence_id",
			Message: fmt.Sprintf("the sealed Evidence %s holds %s", want, c.res.EvidenceID)}}
	}
	if len(issues) > 0 {
		return Checked{}, &Error{Code: "evidence_integrity_mismatch", Kind: KindInternal, Issues: issues,
			Message: fmt.Sprintf("the Evidence %s does not verify, so it was not saved: %d failing path(s)", want, len(issues))}
	}
	return c, nil
}

func sum256(data []byte) [sha256.Size]byte { return sha256.Sum256(data) }
