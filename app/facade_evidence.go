package app

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/backend/attest"
	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/library"
	"github.com/gatehouse/gatehouse/backend/store"
)

// Evidence library limits.
const (
	// MaxImportBytes is the largest Evidence file ImportEvidence accepts:
	// evidence.MaxEnvelopeBytes (64 MiB), refused before parsing
	// (docs/formats/comparison.md, "Errors").
	MaxImportBytes = evidence.MaxEnvelopeBytes
	// maxListedEvidence is the most entries ListEvidence returns.
	maxListedEvidence = 1000
	// maxImportName is the most characters an imported file's name may
	// have (a Linux file name has at most 255 bytes).
	maxImportName = 255
	// importBodyLimit bounds the bridge request of ImportEvidence: the
	// file travels base64-encoded (4/3 of its size) with its name and, when
	// given, its attestation (also base64).
	importBodyLimit = (MaxImportBytes+2)/3*4 + (attest.MaxAttestationBytes+2)/3*4 + 64<<10
	// defaultBodyLimit bounds every other bridge request.
	defaultBodyLimit = 4 << 20
)

// callBodyLimit is the largest request body the browser bridge reads for
// method: ImportEvidence carries a whole Evidence file, the rest are small.
func callBodyLimit(method string) int64 {
	if method == "ImportEvidence" || method == "ImportAsciicast" { // ImportAsciicast: an asciicast file of up to 64 MiB as JSON text
		return importBodyLimit
	}
	return defaultBodyLimit
}

// Origins of a library entry (library.OriginOf).
const (
	OriginCaptured = library.OriginCaptured
	OriginImported = library.OriginImported
)

// EvidenceItem is one Evidence file in the library (the data directory's
// evidence/ folder, indexed in SQLite). Summary is what the index keeps
// for lists: for captures {origin, file_name?, command, started_at, exit,
// settlement, frames, checkpoints, truncated}.
type EvidenceItem struct {
	EvidenceID    string          `json:"evidence_id"`
	PredicateType string          `json:"predicate_type"`
	Operation     string          `json:"operation"`
	Origin        string          `json:"origin"`
	Size          int64           `json:"size"`
	CreatedAt     time.Time       `json:"created_at"`
	Summary       json.RawMessage `json:"summary"`
	// Shared says the person shared it with agents (ShareEvidence).
	Shared bool `json:"shared"`
	// Signature says who signed the attestation kept next to the file:
	// this installation, a trusted key, an untrusted one, or nobody.
	Signature EvidenceSignature `json:"signature"`
}

// ListEvidenceArgs selects library entries.
type ListEvidenceArgs struct {
	// Limit caps the entries returned (1–1000; 0 means 1000).
	Limit int `json:"limit,omitempty"`
}

// ListEvidenceResult is the library, newest first.
type ListEvidenceResult struct {
	Evidence []EvidenceItem `json:"evidence"`
}

// ListEvidence lists the saved Evidence, newest first. It reads only the
// index; GetEvidence checks a file when it is opened. It also starts the
// background verification of the newest files this executable has not
// verified yet (library.Preverify), so that opening one costs a hash.
func (f *Facade) ListEvidence(a ListEvidenceArgs) (ListEvidenceResult, error) {
	if a.Limit < 0 || a.Limit > maxListedEvidence {
		return ListEvidenceResult{}, &CLIError{Code: "invalid_arguments", Category: CategoryInvalid,
			Message: fmt.Sprintf("limit must be between 1 and %d", maxListedEvidence)}
	}
	limit := a.Limit
	if limit == 0 {
		limit = maxListedEvidence
	}
	list, err := f.env.lib().List(f.ctx, limit)
	if err != nil {
		return ListEvidenceResult{}, libError(err)
	}
	out := make([]EvidenceItem, 0, len(list))
	ids := make([]string, 0, len(list))
	sigs := f.signatures()
	for _, e := range list {
		it := itemOf(e)
		it.Signature = sigs.of(f, e.EvidenceID)
		out = append(out, it)
		ids = append(ids, e.EvidenceID)
	}
	f.env.lib().Preverify(f.ctx, ids) // the newest unmarked files, before the person opens one
	return ListEvidenceResult{Evidence: out}, nil
}

// GetEvidenceArgs names one saved Evidence.
type GetEvidenceArgs struct {
	ID string `json:"id"`
}

// GetEvidenceResult is one saved Evidence, verified just now.
type GetEvidenceResult struct {
	Item EvidenceItem `json:"item"`
	// Evidence is the file's exact JSON.
	Evidence json.RawMessage `json:"evidence"`
	// Verification is what was re-checked on this read.
	Verification EvidenceVerifyResult `json:"verification"`
}

// GetEvidence reads a saved Evidence file and checks it on every read:
// the strict envelope and its evidence_id (which must be the id asked
// for) and, for a process capture, every invariant of its record
// (record.Verify). Bytes that already passed that check by this
// executable (their SHA-256 is the id's verification mark, see
// library.MarkNamespace) are not parsed again; any other bytes are
// verified in full. A file that no longer verifies is never returned: the
// error (code evidence_integrity_mismatch) lists every failing path in
// details.
func (f *Facade) GetEvidence(a GetEvidenceArgs) (GetEvidenceResult, error) {
	if !evidence.ValidID(a.ID) {
		return GetEvidenceResult{}, invalidEvidenceID(a.ID)
	}
	o, err := f.env.lib().Open(f.ctx, a.ID)
	if err != nil {
		return GetEvidenceResult{}, libError(err)
	}
	entry, data, sum, res := o.Entry, o.Data, o.Sum, o.Result
	item := itemOf(entry)
	item.Size = int64(len(data))
	// The signature state is about these bytes, not the file read again
	// (which another program may have replaced in between).
	item.Signature = f.signatures().ofDigest(f, a.ID, hex.EncodeToString(sum[:]))
	return GetEvidenceResult{Item: item, Evidence: data, Verification: res}, nil
}

// writeJSON writes r as the JSON encoding/json would give, except that
// the Evidence is its file's exact bytes: they passed the strict parse of
// evidence.Parse (one JSON value, nothing else) in GetEvidence, so they
// can stand as a member's value without being scanned again.
func (r GetEvidenceResult) writeJSON(w io.Writer) error {
	item, err := json.Marshal(r.Item)
	if err != nil {
		return err
	}
	ver, err := json.Marshal(r.Verification)
	if err != nil {
		return err
	}
	for _, b := range [][]byte{[]byte(`{"item":`), item, []byte(`,"evidence":`), r.Evidence, []byte(`,"verification":`), ver, []byte("}\n")} {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// verifiedEnvelope decodes Evidence that GetEvidence returned: those exact
// bytes passed evidence.Parse (strict JSON, evidence_id recomputed) and the
// record checks, so a plain decode yields the same envelope at a fraction
// of the cost of parsing it strictly again.
func verifiedEnvelope(data []byte) (*evidence.Envelope, error) {
	var env evidence.Envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, errorf("internal", CategoryInternal, "decode verified Evidence: %v", err)
	}
	return &env, nil
}

// ImportEvidenceArgs is one Evidence file picked or dropped in the UI.
type ImportEvidenceArgs struct {
	// Name is the file's name (kept for the library, at most 200 characters).
	Name string `json:"name"`
	// Data is the file's exact bytes (base64 in JSON).
	Data []byte `json:"data"`
	// Attestation, when set, is the file's signed in-toto attestation
	// (FILE.intoto.jsonl, base64 in JSON); it is kept next to the file.
	Attestation []byte `json:"attestation,omitempty"`
}

// ImportEvidenceResult is the library entry of an imported file.
type ImportEvidenceResult struct {
	Item EvidenceItem `json:"item"`
	// AlreadyPresent says the same Evidence (same evidence_id) was
	// already in the library; nothing was written.
	AlreadyPresent bool `json:"already_present"`
}

// ImportEvidence verifies an Evidence file exactly as `gatehouse evidence
// verify` does — the strict envelope, its evidence_id and, for a process
// capture, every commitment and invariant of the record — and only then
// saves it under the data directory's evidence/ folder and indexes it.
// Files over MaxImportBytes (64 MiB) are refused before parsing (code
// input_too_large); a file that fails verification is refused with code
// invalid_evidence and every failing path in details. A refused import
// changes nothing.
func (f *Facade) ImportEvidence(a ImportEvidenceArgs) (ImportEvidenceResult, error) {
	name := a.Name
	if !utf8.ValidString(name) || utf8.RuneCountInString(name) > maxImportName {
		return ImportEvidenceResult{}, &CLIError{Code: "invalid_name", Category: CategoryInvalid,
			Details: []evidenceIssue{{Code: "invalid_name", Path: "$.name", Message: fmt.Sprintf("a file name is valid UTF-8 of at most %d characters", maxImportName)}},
			Message: "the file's name is not valid UTF-8 or is longer than the limit; nothing was imported"}
	}
	if len(a.Data) > MaxImportBytes {
		return ImportEvidenceResult{}, &CLIError{Code: "input_too_large", Category: CategoryInvalid,
			Details: []evidenceIssue{{Code: evidence.CodeTooLarge, Path: "$", Message: fmt.Sprintf("the file is %d bytes; the limit is %d bytes", len(a.Data), MaxImportBytes)}},
			Message: fmt.Sprintf("%s is %d bytes; Evidence files over %d bytes (64 MiB) are refused before parsing", displayName(name), len(a.Data), MaxImportBytes)}
	}
	checked, issues := library.Check(a.Data)
	env, res := checked.Envelope(), checked.Result()
	if len(issues) > 0 {
		return ImportEvidenceResult{}, &CLIError{Code: "invalid_evidence", Category: CategoryInvalid, Details: issues,
			Message: fmt.Sprintf("%s was rejected: %d failing path(s); nothing was imported", displayName(name), len(issues))}
	}
	if a.Attestation != nil {
		if err := f.checkImportAttestation(a.Attestation, a.Data, env); err != nil {
			return ImportEvidenceResult{}, err
		}
	}
	entry, present, err := f.env.lib().Import(f.ctx, checked, name)
	if err != nil {
		return ImportEvidenceResult{}, libError(err)
	}
	if err := f.keepAttestation(res.EvidenceID, a.Attestation); err != nil {
		return ImportEvidenceResult{}, err
	}
	item := itemOf(entry)
	item.Signature = f.signatures().of(f, res.EvidenceID)
	return ImportEvidenceResult{Item: item, AlreadyPresent: present}, nil
}

// DeleteEvidenceArgs names one saved Evidence.
type DeleteEvidenceArgs struct {
	ID string `json:"id"`
}

// DeleteEvidenceResult confirms a deletion.
type DeleteEvidenceResult struct {
	Deleted bool `json:"deleted"`
}

// DeleteEvidence removes a saved Evidence file, the attestation kept
// next to it, its index entry and its verification mark (library.Delete).
// The files go first, so a failure leaves the entry (and a retry works).
func (f *Facade) DeleteEvidence(a DeleteEvidenceArgs) (DeleteEvidenceResult, error) {
	if !evidence.ValidID(a.ID) {
		return DeleteEvidenceResult{}, invalidEvidenceID(a.ID)
	}
	err := f.env.lib().Delete(f.ctx, a.ID, func() error {
		if err := os.Remove(attestationPath(f.env.DataDir, a.ID)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return errorf("evidence_not_deleted", CategoryIO, "%v", err)
		}
		return nil
	})
	if err != nil {
		return DeleteEvidenceResult{}, libError(err)
	}
	f.events.publish("evidence", evidenceEvent{EvidenceID: a.ID, Shared: false}) // agents' lists drop it
	return DeleteEvidenceResult{Deleted: true}, nil
}

// ShareEvidenceArgs shares one saved Evidence with agents, or stops.
type ShareEvidenceArgs struct {
	ID     string `json:"id"`
	Shared bool   `json:"shared"`
}

// ShareEvidenceResult is the library entry after the change.
type ShareEvidenceResult struct {
	Item EvidenceItem `json:"item"`
}

// ShareEvidence shares a saved Evidence with agents or stops sharing it.
// Shared Evidence is listed to every MCP connection as a
// gatehouse://evidence/{id} resource, readable and comparable there;
// without sharing, a connection sees only the captures it made itself.
// The change holds for the next list, read or comparison of every
// connection; connected agents are told their resource list changed. Only
// the person's UI calls this: no MCP tool reaches it. An unknown id is
// error evidence_not_found and changes nothing. The change is announced as
// an "evidence" event.
func (f *Facade) ShareEvidence(a ShareEvidenceArgs) (ShareEvidenceResult, error) {
	if !evidence.ValidID(a.ID) {
		return ShareEvidenceResult{}, invalidEvidenceID(a.ID)
	}
	e, err := f.env.lib().SetShared(f.ctx, a.ID, a.Shared)
	if err != nil {
		return ShareEvidenceResult{}, libError(err)
	}
	f.events.publish("evidence", evidenceEvent{EvidenceID: a.ID, Shared: a.Shared})
	return ShareEvidenceResult{Item: itemOf(e)}, nil
}

// evidenceEvent is the "evidence" event: saved Evidence was shared with
// agents or stopped being shared.
type evidenceEvent struct {
	EvidenceID string `json:"evidence_id"`
	Shared     bool   `json:"shared"`
}

func invalidEvidenceID(id string) error {
	return &CLIError{Code: "invalid_arguments", Category: CategoryInvalid, Details: []evidenceIssue{{Code: "invalid_value", Path: "$.id", Message: "an evidence id is ev_ followed by 64 lowercase hex digits"}},
		Message: fmt.Sprintf("%q is not an evidence id", strictTruncate(id, 80))}
}

func strictTruncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

func displayName(name string) string {
	if name == "" {
		return "the file"
	}
	return fmt.Sprintf("%q", name)
}

// itemOf turns an index entry into a library item.
func itemOf(e store.EvidenceEntry) EvidenceItem {
	return EvidenceItem{EvidenceID: e.EvidenceID, PredicateType: e.PredicateType, Operation: e.Operation,
		Origin: library.OriginOf(e), Size: e.Size, CreatedAt: e.CreatedAt, Summary: e.Summary, Shared: e.Shared}
}
