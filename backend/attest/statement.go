package attest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	ita "github.com/in-toto/attestation/go/v1"
	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// PayloadType is the DSSE payload type of an in-toto Statement.
const PayloadType = "application/vnd.in-toto+json"

// FileSuffix is the conventional name ending of an attestation written
// next to its Evidence file (FILE.intoto.jsonl).
const FileSuffix = ".intoto.jsonl"

// Predicate is the summary an attestation carries about its Evidence. It
// repeats what the Evidence says — it never adds a claim the Evidence does
// not make — so a verifier that reads only the statement sees what was
// attested; Verify checks that it matches the Evidence.
type Predicate struct {
	EvidenceID    string              `json:"evidence_id"`
	SchemaVersion int                 `json:"schema_version"`
	PredicateType string              `json:"predicate_type"`
	Operation     string              `json:"operation"`
	Provider      evidence.Provider   `json:"provider"`
	Confidence    evidence.Confidence `json:"confidence"`
	Authority     evidence.Authority  `json:"authority"`
	// StartedAt and CompletedAt are a capture's manifest times.
	StartedAt   string `json:"started_at,omitempty"`
	CompletedAt string `json:"completed_at,omitempty"`
	// CheckedAt is when a comparison checked capture ages, if it did.
	CheckedAt     string   `json:"checked_at,omitempty"`
	Limitations   []string `json:"limitations"`
	EvidenceLinks []string `json:"evidence_links"`
	// Verdicts are a comparison's overall status, its mode and per
	// dimension status, and its trace verdict when a trace spec was used.
	Verdicts map[string]string `json:"verdicts,omitempty"`
}

// SummaryOf is the Predicate of verified Evidence e.
func SummaryOf(e *evidence.Envelope) Predicate {
	p := Predicate{EvidenceID: e.EvidenceID, SchemaVersion: e.SchemaVersion, PredicateType: e.PredicateType,
		Operation: e.Operation, Provider: e.Provider, Confidence: e.Confidence, Authority: e.Authority,
		Limitations: strictjson.NonNil(e.Limitations), EvidenceLinks: strictjson.NonNil(e.EvidenceLinks)}
	switch e.PredicateType {
	case evidence.PredicateProcessCapture:
		var rec struct {
			Manifest struct {
				StartedAt   string `json:"started_at"`
				CompletedAt string `json:"completed_at"`
			} `json:"manifest"`
		}
		_ = json.Unmarshal(e.NormalizedResult, &rec) // verified Evidence: the record has these
		p.StartedAt, p.CompletedAt = rec.Manifest.StartedAt, rec.Manifest.CompletedAt
	case evidence.PredicateProcessComparison, evidence.PredicateProcessComparisonTrace:
		var res map[string]json.RawMessage
		_ = json.Unmarshal(e.NormalizedResult, &res)
		p.Verdicts = map[string]string{}
		for _, k := range []string{"status", "mode", "terminal", "interaction", "exit", "filesystem", "protocol", "process", "shim"} {
			var s string
			if json.Unmarshal(res[k], &s) == nil && s != "" {
				p.Verdicts[k] = s
			}
		}
		var tr struct {
			Verdict string `json:"verdict"`
		}
		if json.Unmarshal(res["trace"], &tr) == nil && tr.Verdict != "" {
			p.Verdicts["trace"] = tr.Verdict
		}
		var params struct {
			CheckedAt string `json:"checked_at"`
			Mode      string `json:"mode"`
		}
		_ = json.Unmarshal(e.Parameters, &params)
		p.CheckedAt = params.CheckedAt
		if _, ok := p.Verdicts["mode"]; !ok && params.Mode != "" {
			p.Verdicts["mode"] = params.Mode
		}
	}
	return p
}

// executableOf is the artifact the Evidence is about: its subject, or for
// a capture without one the executable that ran (the scenario's
// executable and the manifest's executable_sha256, the SHA-256 of its
// bytes).
func executableOf(e *evidence.Envelope) (name, sha256 string, ok bool) {
	if e.Subject != nil {
		return e.Subject.Name, e.Subject.Digest.SHA256, true
	}
	if e.PredicateType != evidence.PredicateProcessCapture {
		return "", "", false
	}
	var rec struct {
		Manifest struct {
			Scenario struct {
				Executable string `json:"executable"`
			} `json:"scenario"`
			ExecutableSHA256 string `json:"executable_sha256"`
		} `json:"manifest"`
	}
	if json.Unmarshal(e.NormalizedResult, &rec) != nil || len(rec.Manifest.ExecutableSHA256) != 64 {
		return "", "", false
	}
	return rec.Manifest.Scenario.Executable, rec.Manifest.ExecutableSHA256, true
}

// Statement is the in-toto Statement v1 of one Evidence file, built with
// the in-toto attestation library's types: subject[0] is the file (its
// base name and the SHA-256 of its exact bytes); for a capture, subject[1]
// is the executable that ran (its name and sha256 from the Evidence
// subject). The predicate type is the Evidence's predicate_type and the
// predicate its Predicate. data must be the bytes e was parsed and
// verified from.
func Statement(fileName string, data []byte, e *evidence.Envelope) (*ita.Statement, error) {
	sum := sha256.Sum256(data)
	name := filepath.Base(fileName)
	if fileName == "" || name == "." || name == "/" {
		name = e.EvidenceID + ".json"
	}
	subjects := []*ita.ResourceDescriptor{{Name: name, Digest: map[string]string{"sha256": hex.EncodeToString(sum[:])}}}
	if name, digest, ok := executableOf(e); ok {
		subjects = append(subjects, &ita.ResourceDescriptor{Name: name, Digest: map[string]string{"sha256": digest}})
	}
	pj, err := json.Marshal(SummaryOf(e))
	if err != nil {
		return nil, fmt.Errorf("attest: encode predicate: %w", err)
	}
	pred := &structpb.Struct{}
	if err := protojson.Unmarshal(pj, pred); err != nil {
		return nil, fmt.Errorf("attest: encode predicate: %w", err)
	}
	st := &ita.Statement{Type: ita.StatementTypeUri, Subject: subjects, PredicateType: e.PredicateType, Predicate: pred}
	if err := st.Validate(); err != nil {
		return nil, fmt.Errorf("attest: statement: %w", err)
	}
	return st, nil
}

// Sign signs statement st with s and returns the DSSE envelope as one line
// of JSON followed by a newline (the .intoto.jsonl form cosign reads).
func Sign(ctx context.Context, s *Signer, st *ita.Statement) ([]byte, error) {
	raw, err := protojson.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("attest: encode statement: %w", err)
	}
	// protojson varies its whitespace on purpose; the signed payload is
	// compacted so the same statement gives the same bytes.
	var payload bytes.Buffer
	if err := json.Compact(&payload, raw); err != nil {
		return nil, fmt.Errorf("attest: encode statement: %w", err)
	}
	es, err := dsse.NewEnvelopeSigner(s)
	if err != nil {
		return nil, fmt.Errorf("attest: %w", err)
	}
	env, err := es.SignPayload(ctx, PayloadType, payload.Bytes())
	if err != nil {
		return nil, fmt.Errorf("attest: sign: %w", err)
	}
	out, err := json.Marshal(env)
	if err != nil {
		return nil, fmt.Errorf("attest: encode envelope: %w", err)
	}
	return append(out, '\n'), nil
}

// Attest is Statement followed by Sign: the attestation of the Evidence
// file named fileName whose exact bytes are data and whose verified
// envelope is e.
func Attest(ctx context.Context, s *Signer, fileName string, data []byte, e *evidence.Envelope) ([]byte, error) {
	if s == nil || e == nil {
		return nil, errors.New("attest: nil signer or envelope")
	}
	st, err := Statement(fileName, data, e)
	if err != nil {
		return nil, err
	}
	return Sign(ctx, s, st)
}
