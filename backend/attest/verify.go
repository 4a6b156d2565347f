package attest

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	ita "github.com/in-toto/attestation/go/v1"
	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// MaxAttestationBytes is the largest attestation file accepted (an
// attestation is a few kilobytes; its predicate is a summary).
const MaxAttestationBytes = 1 << 20

// maxSignatures bounds the signatures of one envelope.
const maxSignatures = 16

// Issue codes of a failed verification; stable and machine readable.
const (
	CodeTooLarge          = "attestation_too_large"          // over MaxAttestationBytes
	CodeMalformed         = "attestation_malformed"          // not a DSSE envelope (JSON, fields, base64)
	CodePayloadType       = "attestation_payload_type"       // payloadType is not application/vnd.in-toto+json
	CodeUntrustedKey      = "attestation_untrusted_key"      // no signature names a trusted key
	CodeSignatureInvalid  = "attestation_signature_invalid"  // a trusted key's signature does not verify
	CodeStatementInvalid  = "attestation_statement_invalid"  // the signed payload is not an in-toto Statement v1
	CodeSubjectMismatch   = "attestation_subject_mismatch"   // the file is not the statement's subject
	CodePredicateMismatch = "attestation_predicate_mismatch" // the statement does not describe this Evidence
)

// Issue is one reason an attestation was rejected: a Code above, the JSON
// path of the problem in the attestation ($ the envelope, $.payload.… the
// signed statement) and a message for people.
//
// It is the issue every Gatehouse parser reports.
type Issue = strictjson.Issue

// Trust is what a verification accepts as a signer.
type Trust struct {
	// Installation are this installation's keys (current and rotated).
	Installation []PublicKey
	// Trusted are keys of other installations the person added.
	Trusted []PublicKey
	// Given are keys named for this verification only (--key).
	Given []PublicKey
}

// How a verified attestation's signer is known.
const (
	SignerInstallation = "installation" // a key of this installation
	SignerTrusted      = "trusted"      // a key the person added as trusted
	SignerGiven        = "given"        // a key named for this verification
)

// Result is a verified attestation.
type Result struct {
	// Fingerprint is the key whose signature verified.
	Fingerprint string `json:"fingerprint"`
	// SignedBy is SignerInstallation, SignerTrusted or SignerGiven.
	SignedBy string `json:"signed_by"`
	// PredicateType is the statement's predicate type.
	PredicateType string `json:"predicate_type"`
	// Subject is the name the statement gives the Evidence file.
	Subject string `json:"subject"`
	// Predicate is the statement's summary of the Evidence.
	Predicate Predicate `json:"predicate"`
}

// ParseEnvelope reads a DSSE envelope strictly: one JSON object (a
// trailing newline allowed, as in .intoto.jsonl) with exactly payloadType,
// payload and signatures; payload and each sig in standard base64 (DSSE
// allows URL-safe base64 too, accepted); 1–16 signatures, each {keyid,
// sig}. The payload is returned decoded.
func ParseEnvelope(data []byte) (*dsse.Envelope, []byte, []Issue) {
	if len(data) > MaxAttestationBytes {
		return nil, nil, []Issue{{Code: CodeTooLarge, Path: "$", Message: fmt.Sprintf("the attestation is %d bytes; the limit is %d", len(data), MaxAttestationBytes)}}
	}
	if !utf8.Valid(data) {
		return nil, nil, []Issue{{Code: CodeMalformed, Path: "$", Message: "the attestation is not UTF-8 text"}}
	}
	var col strictjson.Collector
	root := strictjson.Decode(data, "$", strictjson.Options{MaxDepth: 8, MaxValues: 256, Surrogates: true, RootObject: true}, &col)
	c := strictjson.Checker{Issues: &col, ListAllowed: true}
	if root == nil {
		return nil, nil, malformed(col.List)
	}
	m, _ := c.Object(root, "$", "payloadType", "payload", "signatures")
	env := &dsse.Envelope{}
	if m != nil {
		env.PayloadType, _ = c.ReqStr(m, "$", "payloadType")
		env.Payload, _ = c.ReqStr(m, "$", "payload")
		c.List(m, "$", "signatures", true, 1, maxSignatures, func(i int, e *strictjson.Node, at string) bool {
			sm, ok := c.Object(e, at, "keyid", "sig")
			if sm == nil {
				return false
			}
			var s dsse.Signature
			if n, has := sm["keyid"]; has {
				s.KeyID, _ = c.Str(n, at+".keyid")
			}
			s.Sig, _ = c.ReqStr(sm, at, "sig")
			if s.Sig != "" {
				if _, err := b64(s.Sig); err != nil {
					c.Add(at+".sig", CodeMalformed, "the signature is not base64")
				}
			}
			env.Signatures = append(env.Signatures, s)
			return ok
		})
	}
	if !col.Empty() {
		return nil, nil, malformed(col.List)
	}
	payload, err := b64(env.Payload)
	if err != nil {
		return nil, nil, []Issue{{Code: CodeMalformed, Path: "$.payload", Message: "the payload is not base64"}}
	}
	if env.PayloadType != PayloadType {
		return nil, nil, []Issue{{Code: CodePayloadType, Path: "$.payloadType", Message: fmt.Sprintf("payloadType is %q; an in-toto attestation has %q", truncate(env.PayloadType, 80), PayloadType)}}
	}
	return env, payload, nil
}

func malformed(l []strictjson.Issue) []Issue {
	out := make([]Issue, 0, len(l))
	for _, is := range l {
		out = append(out, Issue{Code: CodeMalformed, Path: is.Path, Message: is.Message})
	}
	return out
}

// b64 decodes DSSE base64: standard, else URL-safe (both padded), as the
// DSSE envelope specification allows.
func b64(s string) ([]byte, error) {
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		b, err = base64.URLEncoding.Strict().DecodeString(s)
	}
	return b, err
}

// VerifySignature finds a signature of env made by a key of trust and
// checks it with go-securesystemslib's DSSE verifier (over DSSE's
// pre-authentication encoding of payloadType and payload). A signature
// naming a trusted key that does not verify is CodeSignatureInvalid (the
// statement or the signature was changed); signatures by keys outside
// trust are CodeUntrustedKey, naming them.
func VerifySignature(ctx context.Context, env *dsse.Envelope, trust Trust) (PublicKey, string, []Issue) {
	type cand struct {
		key  PublicKey
		kind string
	}
	var all []cand
	for _, g := range []struct {
		keys []PublicKey
		kind string
	}{{trust.Installation, SignerInstallation}, {trust.Trusted, SignerTrusted}, {trust.Given, SignerGiven}} {
		for _, k := range g.keys {
			all = append(all, cand{k, g.kind})
		}
	}
	var issues []Issue
	var unknown []string
	for i, s := range env.Signatures {
		at := fmt.Sprintf("$.signatures[%d]", i)
		matched := false
		for _, c := range all {
			// A signature without keyid is tried against every key.
			if s.KeyID != "" && s.KeyID != c.key.Fingerprint {
				continue
			}
			matched = true
			one := &dsse.Envelope{PayloadType: env.PayloadType, Payload: env.Payload, Signatures: []dsse.Signature{s}}
			v, err := dsse.NewEnvelopeVerifier(verifier{c.key})
			if err != nil {
				return PublicKey{}, "", []Issue{{Code: CodeSignatureInvalid, Path: at, Message: err.Error()}}
			}
			if _, err := v.Verify(ctx, one); err == nil {
				return c.key, c.kind, nil
			}
			if s.KeyID != "" {
				issues = append(issues, Issue{Code: CodeSignatureInvalid, Path: at + ".sig", Message: fmt.Sprintf("the signature by %s does not verify: the signed statement or the signature was changed", c.key.Fingerprint)})
			}
		}
		switch {
		case !matched:
			unknown = append(unknown, displayKeyID(s.KeyID))
		case s.KeyID == "":
			issues = append(issues, Issue{Code: CodeSignatureInvalid, Path: at + ".sig", Message: "the signature (without keyid) verifies with no trusted key: the signed statement or the signature was changed, or the signer is not trusted"})
		}
	}
	if len(issues) > 0 {
		return PublicKey{}, "", issues
	}
	return PublicKey{}, "", []Issue{{Code: CodeUntrustedKey, Path: "$.signatures", Message: fmt.Sprintf("signed by %s, which is neither a key of this installation nor a trusted key; add the signer's public key as trusted or pass it with --key", strings.Join(unknown, ", "))}}
}

// ParseStatement reads the signed payload as an in-toto Statement v1 with
// the in-toto attestation library (unknown fields refused) and checks it
// with Statement.Validate.
func ParseStatement(payload []byte) (*ita.Statement, []Issue) {
	st := &ita.Statement{}
	if err := protojson.Unmarshal(payload, st); err != nil {
		return nil, []Issue{{Code: CodeStatementInvalid, Path: "$.payload", Message: "the signed payload is not an in-toto Statement: " + truncate(err.Error(), 200)}}
	}
	if err := st.Validate(); err != nil {
		return nil, []Issue{{Code: CodeStatementInvalid, Path: "$.payload", Message: "the signed payload is not a valid in-toto Statement v1: " + err.Error()}}
	}
	return st, nil
}

// CheckStatement checks that st attests the Evidence file whose exact
// bytes are data and whose verified envelope is e: a subject with the
// file's sha256, the executable's subject for a capture, the Evidence's
// predicate type, and a predicate equal to SummaryOf(e). It returns the
// subject name given to the file.
func CheckStatement(st *ita.Statement, data []byte, e *evidence.Envelope) (string, Predicate, []Issue) {
	sum := sha256.Sum256(data)
	want := hex.EncodeToString(sum[:])
	var issues []Issue
	name := ""
	found := false
	var listed []string
	for _, s := range st.GetSubject() {
		d := s.GetDigest()["sha256"]
		listed = append(listed, fmt.Sprintf("%q sha256:%q", truncate(s.GetName(), 60), truncate(d, 64)))
		if d == want {
			found, name = true, s.GetName()
		}
	}
	if !found {
		issues = append(issues, Issue{Code: CodeSubjectMismatch, Path: "$.payload.subject", Message: fmt.Sprintf("the Evidence file has sha256 %s, which is not a subject of the attestation (%s): the file was changed after it was attested, or the attestation is of another file", want, strings.Join(listed, "; "))})
	}
	if xname, xsum, ok := executableOf(e); ok && !slices.ContainsFunc(st.GetSubject(), func(s *ita.ResourceDescriptor) bool {
		return s.GetDigest()["sha256"] == xsum
	}) {
		issues = append(issues, Issue{Code: CodeSubjectMismatch, Path: "$.payload.subject", Message: fmt.Sprintf("the Evidence's subject %q (sha256 %s) is not a subject of the attestation", truncate(xname, 60), xsum)})
	}
	if st.GetPredicateType() != e.PredicateType {
		issues = append(issues, Issue{Code: CodePredicateMismatch, Path: "$.payload.predicateType", Message: fmt.Sprintf("the attestation's predicate type is %q; the Evidence's is %q", truncate(st.GetPredicateType(), 80), e.PredicateType)})
	}
	var got Predicate
	raw, err := protojson.Marshal(st.GetPredicate())
	if err == nil {
		err = strictUnmarshal(raw, &got)
	}
	if err != nil {
		issues = append(issues, Issue{Code: CodePredicateMismatch, Path: "$.payload.predicate", Message: "the predicate is not a Gatehouse Evidence summary: " + truncate(err.Error(), 200)})
		return name, got, issues
	}
	wantP := SummaryOf(e)
	if got.EvidenceID != wantP.EvidenceID {
		issues = append(issues, Issue{Code: CodePredicateMismatch, Path: "$.payload.predicate.evidence_id", Message: fmt.Sprintf("the attestation is of %q; the file holds %s", truncate(got.EvidenceID, 80), wantP.EvidenceID)})
	} else if !reflect.DeepEqual(normalize(got), normalize(wantP)) {
		issues = append(issues, Issue{Code: CodePredicateMismatch, Path: "$.payload.predicate", Message: "the predicate's summary differs from what the Evidence says"})
	}
	return name, got, issues
}

func strictUnmarshal(raw []byte, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// normalize makes empty and nil collections compare equal.
func normalize(p Predicate) Predicate {
	p.Limitations, p.EvidenceLinks = strictjson.NonNil(p.Limitations), strictjson.NonNil(p.EvidenceLinks)
	if len(p.Verdicts) == 0 {
		p.Verdicts = nil
	}
	return p
}

// Verify checks attestation att against the Evidence file whose exact
// bytes are data and whose envelope e has already passed Evidence
// verification: the envelope form, a signature by a key of trust, the
// statement, and that the statement attests exactly this file. Every
// failing step is reported; nothing after a failed signature is trusted,
// so a statement is only read once its signature verified.
func Verify(ctx context.Context, att, data []byte, e *evidence.Envelope, trust Trust) (Result, []Issue) {
	env, payload, issues := ParseEnvelope(att)
	if len(issues) > 0 {
		return Result{}, issues
	}
	key, kind, issues := VerifySignature(ctx, env, trust)
	if len(issues) > 0 {
		return Result{}, issues
	}
	st, issues := ParseStatement(payload)
	if len(issues) > 0 {
		return Result{}, issues
	}
	name, pred, issues := CheckStatement(st, data, e)
	if len(issues) > 0 {
		return Result{}, issues
	}
	return Result{Fingerprint: key.Fingerprint, SignedBy: kind, PredicateType: st.GetPredicateType(), Subject: name, Predicate: pred}, nil
}

// displayKeyID is a signature's keyid for messages: a fingerprint as it
// is, anything else (untrusted text) quoted, with control characters
// escaped, and cut short.
func displayKeyID(k string) string {
	if _, ok := fileNameOf(k); ok {
		return k
	}
	if k == "" {
		return "a key without keyid"
	}
	return fmt.Sprintf("keyid %q", truncate(k, 64))
}

// VerifyDigest is Verify for a library listing, where the Evidence is
// known by the SHA-256 of its exact bytes and its evidence_id (already
// checked when it was saved) rather than parsed again: the envelope, a
// trusted signature, the statement, a subject with that sha256 and a
// predicate naming that evidence id. Untrusted is the keyid of the first
// signature when the failure is CodeUntrustedKey and it is a fingerprint
// (never other untrusted text), so the caller can say who signed.
func VerifyDigest(ctx context.Context, att []byte, fileSHA256, evidenceID string, trust Trust) (res Result, untrusted string, issues []Issue) {
	env, payload, issues := ParseEnvelope(att)
	if len(issues) > 0 {
		return Result{}, "", issues
	}
	key, kind, issues := VerifySignature(ctx, env, trust)
	if len(issues) > 0 {
		if _, ok := fileNameOf(env.Signatures[0].KeyID); ok && issues[0].Code == CodeUntrustedKey {
			untrusted = env.Signatures[0].KeyID
		}
		return Result{}, untrusted, issues
	}
	st, issues := ParseStatement(payload)
	if len(issues) > 0 {
		return Result{}, "", issues
	}
	i := slices.IndexFunc(st.GetSubject(), func(s *ita.ResourceDescriptor) bool { return s.GetDigest()["sha256"] == fileSHA256 })
	if i < 0 {
		return Result{}, "", []Issue{{Code: CodeSubjectMismatch, Path: "$.payload.subject", Message: fmt.Sprintf("the Evidence file has sha256 %s, which is not a subject of the attestation", fileSHA256)}}
	}
	var pred Predicate
	raw, err := protojson.Marshal(st.GetPredicate())
	if err == nil {
		err = strictUnmarshal(raw, &pred)
	}
	if err != nil || pred.EvidenceID != evidenceID {
		return Result{}, "", []Issue{{Code: CodePredicateMismatch, Path: "$.payload.predicate.evidence_id", Message: fmt.Sprintf("the attestation is not of %s", evidenceID)}}
	}
	return Result{Fingerprint: key.Fingerprint, SignedBy: kind, PredicateType: st.GetPredicateType(), Subject: st.GetSubject()[i].GetName(), Predicate: pred}, "", nil
}

// CheckUnverified checks, without any signature, that att is a
// well-formed attestation whose statement describes the Evidence file
// data/e. It authenticates nothing: it is for keeping an attestation by a
// key nobody trusts yet (an import), so that what is kept at least
// claims to be about this file; trusting the key later lets Verify
// authenticate it.
func CheckUnverified(att, data []byte, e *evidence.Envelope) []Issue {
	_, payload, issues := ParseEnvelope(att)
	if len(issues) > 0 {
		return issues
	}
	st, issues := ParseStatement(payload)
	if len(issues) > 0 {
		return issues
	}
	_, _, issues = CheckStatement(st, data, e)
	return issues
}
