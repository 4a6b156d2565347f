package evidence

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// SchemaVersion is the Evidence envelope version this package writes and
// accepts.
const SchemaVersion = 2

// IDPrefix starts every evidence_id; 64 lowercase hexadecimal characters
// follow it.
const IDPrefix = "ev_"

// Values fixed by docs/formats/capture-record.md for Process Capture and comparison
// Evidence. Parse enforces them for envelopes whose predicate_type is one of
// these predicates.
const (
	// ProcessProviderID is the provider id of Process Capture Evidence.
	ProcessProviderID = "gatehouse-process"
	// PredicateProcessCapture is the predicate_type of a capture; its
	// normalized_result is the capture record of docs/formats/capture-record.md.
	PredicateProcessCapture = "gatehouse.process-capture/v4"
	// OperationCaptureProcess is the operation of a capture.
	OperationCaptureProcess = "capture_process_scenario"
	// PredicateProcessComparison is the predicate_type of a comparison made
	// without a trace spec.
	PredicateProcessComparison = "gatehouse.process-comparison/v3"
	// PredicateProcessComparisonTrace is the predicate_type of a comparison
	// made with a trace spec.
	PredicateProcessComparisonTrace = "gatehouse.process-comparison/v4"
	// OperationCompareProcesses is the operation of a comparison; its
	// evidence_links are [left, right].
	OperationCompareProcesses = "compare_process_captures"
)

// Confidence says how directly Evidence was obtained.
type Confidence string

// The confidence levels of Evidence v2.
const (
	// Observed: recorded directly from the subject (a capture).
	Observed Confidence = "observed"
	// Derived: computed deterministically from other Evidence (a comparison).
	Derived Confidence = "derived"
	// Inferred: a judgement that goes beyond what was computed.
	Inferred Confidence = "inferred"
)

// Valid reports whether c is one of Observed, Derived and Inferred.
func (c Confidence) Valid() bool {
	return c == Observed || c == Derived || c == Inferred
}

// Authority says what the Evidence can speak for (docs/formats/capture-record.md). The product spec names
// controlled-replay and analyst-inference and leaves the set open ("…");
// this package accepts exactly the five authorities of the Evidence v2
// vocabulary: shipped-artifact, controlled-replay, historical-reference,
// external-service and analyst-inference.
type Authority string

// The authorities of Evidence v2.
const (
	// AuthorityShippedArtifact: read from the artifact as shipped.
	AuthorityShippedArtifact Authority = "shipped-artifact"
	// AuthorityControlledReplay: observed by running the subject under
	// Gatehouse's control (Process Capture).
	AuthorityControlledReplay Authority = "controlled-replay"
	// AuthorityHistoricalReference: taken from an earlier record.
	AuthorityHistoricalReference Authority = "historical-reference"
	// AuthorityExternalService: reported by a service outside Gatehouse.
	AuthorityExternalService Authority = "external-service"
	// AuthorityAnalystInference: concluded from other Evidence (comparison).
	AuthorityAnalystInference Authority = "analyst-inference"
)

// Valid reports whether a is one of the five Authority constants.
func (a Authority) Valid() bool {
	switch a {
	case AuthorityShippedArtifact, AuthorityControlledReplay, AuthorityHistoricalReference,
		AuthorityExternalService, AuthorityAnalystInference:
		return true
	}
	return false
}

// Isolation is how the environment that produced Evidence was separated from
// the host.
type Isolation string

// The isolation levels of an Environment.
const (
	IsolationNone           Isolation = "none"
	IsolationProcess        Isolation = "process"
	IsolationContainer      Isolation = "container"
	IsolationVirtualMachine Isolation = "virtual-machine"
)

// Valid reports whether i is one of the four Isolation constants.
func (i Isolation) Valid() bool {
	switch i {
	case IsolationNone, IsolationProcess, IsolationContainer, IsolationVirtualMachine:
		return true
	}
	return false
}

// Envelope is one Evidence v2 record. Field names and JSON shape follow
// docs/formats/capture-record.md exactly; Parse accepts nothing else. Fields marked
// "null |" in the spec are pointers; every other field is required and
// non-null. The open-ended parts are json.RawMessage: Parameters must be a
// JSON object, RawResult and NormalizedResult any JSON value (null
// included), and each element of Locations a JSON object.
//
// EvidenceID commits to every field except itself and Subject.Name and
// Subject.LocalPath (see ComputeID), so an Envelope must be re-sealed after
// any change.
type Envelope struct {
	SchemaVersion    int               `json:"schema_version"`
	EvidenceID       string            `json:"evidence_id"`
	Subject          *Subject          `json:"subject"`
	Provider         Provider          `json:"provider"`
	PredicateType    string            `json:"predicate_type"`
	Operation        string            `json:"operation"`
	Parameters       json.RawMessage   `json:"parameters"`
	RawResult        json.RawMessage   `json:"raw_result"`
	NormalizedResult json.RawMessage   `json:"normalized_result"`
	Confidence       Confidence        `json:"confidence"`
	Authority        Authority         `json:"authority"`
	Environment      *Environment      `json:"environment"`
	Limitations      []string          `json:"limitations"`
	Locations        []json.RawMessage `json:"locations"`
	EvidenceLinks    []string          `json:"evidence_links"`
}

// Subject identifies the artifact the Evidence is about. Name and LocalPath
// describe where it was found on this machine and are excluded from the
// evidence_id; Digest, Format and Architecture identify it and are included.
// Every field but LocalPath must be non-empty.
type Subject struct {
	Name         string        `json:"name"`
	Digest       SubjectDigest `json:"digest"`
	Format       string        `json:"format"`
	Architecture string        `json:"architecture"`
	LocalPath    string        `json:"local_path"`
}

// SubjectDigest holds the subject's content digest: SHA256 is 64 lowercase
// hexadecimal characters.
type SubjectDigest struct {
	SHA256 string `json:"sha256"`
}

// Provider names the component that produced the Evidence; all three fields
// must be non-empty.
type Provider struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Environment describes where the Evidence was produced; ID, Platform and
// Architecture must be non-empty and Isolation valid.
type Environment struct {
	ID           string    `json:"id"`
	Platform     string    `json:"platform"`
	Architecture string    `json:"architecture"`
	Isolation    Isolation `json:"isolation"`
}

// subjectIdentity is the part of a Subject that enters the evidence_id.
type subjectIdentity struct {
	Digest       SubjectDigest `json:"digest"`
	Format       string        `json:"format"`
	Architecture string        `json:"architecture"`
}

// ComputeID returns the evidence_id e should carry:
// "ev_" + Digest(e without evidence_id, with subject reduced to {digest,
// format, architecture}). It reads e only; e.EvidenceID is ignored. Nil
// slices count as empty arrays and nil raw messages as JSON null, matching
// what Seal writes. It fails when a raw message is not valid JSON or the
// projection cannot be canonicalized.
func ComputeID(e *Envelope) (string, error) { return computeID(e, nil) } // id.go

// ValidID reports whether id has the evidence_id form "ev_" followed by 64
// lowercase hexadecimal characters. It does not say whether id matches any
// envelope.
func ValidID(id string) bool {
	return len(id) == len(IDPrefix)+64 && id[:len(IDPrefix)] == IDPrefix && strictjson.IsHex64(id[len(IDPrefix):])
}

// Seal prepares e for writing and sets its evidence_id. It sets a zero
// SchemaVersion to SchemaVersion, replaces nil Limitations, Locations and
// EvidenceLinks with empty slices and nil RawResult/NormalizedResult with
// JSON null, computes EvidenceID with ComputeID, and then checks the result
// exactly as Parse would check json.Marshal(e). On success Parse accepts
// json.Marshal(e) and returns an envelope with the same evidence_id and
// fields (raw messages compacted). On failure e.EvidenceID is
// left empty and the error wraps an IssueList naming every failing path.
func Seal(e *Envelope) error {
	_, err := SealJSON(e)
	return err
}

// SealJSON is Seal, and on success also returns e's JSON as checked: one
// line of compact JSON without HTML escaping ("<" and ">" stay literal),
// ending with a newline, which Parse accepts with the same evidence_id. It
// spares a caller that saves the envelope a second encoding of a large
// result.
func SealJSON(e *Envelope) ([]byte, error) {
	b, _, err := seal(e, false, nil)
	return b, err
}

// SealParsed is SealJSON that checks the bytes it returns exactly as
// Parse does, the evidence_id recomputed from them included, and also
// returns the envelope Parse gives for them. A caller that must verify
// what it saves can take (bytes, parsed) as Parse's result without
// parsing the bytes a second time. The parsed envelope's raw messages
// share the returned bytes (no copy of a 10 MB result), and so does e's
// normalized result when it is the same bytes: none may be modified.
func SealParsed(e *Envelope) ([]byte, *Envelope, error) {
	return seal(e, true, nil)
}

// SealParsedStaged is SealParsed that hands the written bytes and their
// evidence_id to written as soon as they are written, before they are
// checked, so that the caller can start storing them while the check
// runs (library.Library.SealAndSave writes and syncs a temporary file).
// written must not modify the bytes, and they are Evidence only when
// SealParsedStaged then returns them without an error; on an error the
// caller discards what it stored. written is not called when the
// envelope cannot be encoded.
func SealParsedStaged(e *Envelope, written func(id string, b []byte)) ([]byte, *Envelope, error) {
	return seal(e, true, written)
}

// seal is SealJSON; with checkID the check of the written bytes is
// Parse's in full (the evidence_id recomputed from the bytes), and the
// parsed envelope is returned. written, when set, gets the bytes before
// they are checked (SealParsedStaged).
func seal(e *Envelope, checkID bool, written func(id string, b []byte)) ([]byte, *Envelope, error) {
	if e == nil {
		return nil, nil, errors.New("evidence: seal: nil envelope")
	}
	if e.SchemaVersion == 0 {
		e.SchemaVersion = SchemaVersion
	}
	e.Limitations = strictjson.NonNil(e.Limitations)
	e.Locations = strictjson.NonNil(e.Locations)
	e.EvidenceLinks = strictjson.NonNil(e.EvidenceLinks)
	e.RawResult = rawOrNull(e.RawResult)
	e.NormalizedResult = rawOrNull(e.NormalizedResult)
	e.EvidenceID = ""
	// The written bytes hold e's normalized result as it is (a large one
	// spliced), so the check's recomputed evidence_id takes its canonical
	// form from here when the parsed bytes are the same (id.go).
	memo := &canonicalMemo{}
	id, err := computeID(e, memo)
	if err != nil {
		return nil, nil, fmt.Errorf("evidence: seal: %w", err)
	}
	e.EvidenceID = id
	b, err := encodeEnvelope(e) // seal_encode.go
	if err != nil {
		e.EvidenceID = ""
		return nil, nil, fmt.Errorf("evidence: seal: encode envelope: %w", err)
	}
	if written != nil {
		written(id, b)
	}
	// The evidence_id was just computed from e, whose JSON these bytes are
	// (ComputeID reads e through the same encoding), so without checkID
	// the check skips recomputing it; everything else is checked as Parse
	// checks it.
	parsed, issues := parse(b, checkID, memo)
	if len(issues) > 0 {
		e.EvidenceID = ""
		return nil, nil, fmt.Errorf("evidence: seal: invalid envelope: %w", IssueList(issues))
	}
	if checkID && (memo.hit || bytes.Equal(parsed.NormalizedResult, e.NormalizedResult)) {
		// The same bytes (the memo's hit compared every member of the
		// projection, this one included): e shares the written ones, so a
		// caller's copy of a large result is not kept alive beside them.
		e.NormalizedResult = parsed.NormalizedResult
	}
	return b, parsed, nil
}

func rawOrNull(r json.RawMessage) json.RawMessage {
	if len(r) == 0 {
		return json.RawMessage("null")
	}
	return r
}
