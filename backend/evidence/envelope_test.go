package evidence

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

const (
	leftID  = "ev_1111111111111111111111111111111111111111111111111111111111111111"
	rightID = "ev_2222222222222222222222222222222222222222222222222222222222222222"
)

// sampleCapture is a capture envelope shaped like docs/formats/capture-record.md's record.
func sampleCapture() *Envelope {
	return &Envelope{
		Subject: &Subject{
			Name:         "node",
			Digest:       SubjectDigest{SHA256: strings.Repeat("ab", 32)},
			Format:       "elf",
			Architecture: "x86_64",
			LocalPath:    "/usr/bin/node",
		},
		Provider:      Provider{ID: ProcessProviderID, Name: "Gatehouse Process Capture", Version: "4"},
		PredicateType: PredicateProcessCapture,
		Operation:     OperationCaptureProcess,
		Parameters:    json.RawMessage(`{"approved":true,"executable":"/usr/bin/node","arguments":["./signup.mjs"],"timeout_ms":30000,"normalization":{"paths":true,"pids":true,"ports":true,"time_bucket_ms":10,"patterns":[]}}`),
		NormalizedResult: json.RawMessage(`{
			"manifest": {"platform": "linux", "started_at": "2026-01-02T03:04:05Z", "normalization_sha256": "` + digestNormalization + `"},
			"frames": [{"sequence": 0, "at_ms": 12, "data": "All set!\r\n"}, {"sequence": 1, "at_ms": 20.5, "data": "é😀"}],
			"exit": {"code": 0, "signal": null, "reason": "exited"},
			"truncated": false,
			"limitations": ["Process trees are sampled."],
			"residual_unknowns": []
		}`),
		Confidence:  Observed,
		Authority:   AuthorityControlledReplay,
		Environment: &Environment{ID: "host", Platform: "linux", Architecture: "x86_64", Isolation: IsolationProcess},
		Limitations: []string{"Process Capture is an observation tool, not a sandbox.", "Short-lived descendants may be missed."},
		Locations:   []json.RawMessage{json.RawMessage(`{"kind":"artifact-path","path":"/usr/bin/node"}`)},
	}
}

func sampleComparison() *Envelope {
	return &Envelope{
		Provider:         Provider{ID: ProcessProviderID, Name: "Gatehouse Process Capture", Version: "4"},
		PredicateType:    PredicateProcessComparison,
		Operation:        OperationCompareProcesses,
		Parameters:       json.RawMessage(`{"left_evidence_id":"` + leftID + `","right_evidence_id":"` + rightID + `"}`),
		NormalizedResult: json.RawMessage(`{"status":"unchanged","first_divergence":{"status":"none"},"limitations":[]}`),
		Confidence:       Derived,
		Authority:        AuthorityAnalystInference,
		EvidenceLinks:    []string{leftID, rightID},
	}
}

// sealed seals e and returns its JSON.
func sealed(t testing.TB, e *Envelope) []byte {
	t.Helper()
	if err := Seal(e); err != nil {
		t.Fatalf("Seal: %v", err)
	}
	data, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func mustParse(t testing.TB, data []byte) *Envelope {
	t.Helper()
	e, issues := Parse(data)
	if len(issues) > 0 || e == nil {
		t.Fatalf("Parse rejected a valid envelope: %v\n%s", issues, strictjson.Truncate(string(data), 2000))
	}
	return e
}

func hasIssue(issues []Issue, code, path string) bool {
	for _, i := range issues {
		if i.Code == code && i.Path == path {
			return true
		}
	}
	return false
}

func TestSealRoundTrip(t *testing.T) {
	for name, e := range map[string]*Envelope{"capture": sampleCapture(), "comparison": sampleComparison()} {
		t.Run(name, func(t *testing.T) {
			data := sealed(t, e)
			if !ValidID(e.EvidenceID) || e.SchemaVersion != SchemaVersion {
				t.Fatalf("Seal set evidence_id %q schema_version %d", e.EvidenceID, e.SchemaVersion)
			}
			if id, err := ComputeID(e); err != nil || id != e.EvidenceID {
				t.Fatalf("ComputeID = %s, %v; want %s", id, err, e.EvidenceID)
			}
			got := mustParse(t, data)
			again, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, data) {
				t.Fatalf("Seal → Marshal → Parse → Marshal changed the envelope:\n%s\n%s", data, again)
			}
			if got.EvidenceID != e.EvidenceID || !reflect.DeepEqual(got.Subject, e.Subject) || !reflect.DeepEqual(got.Environment, e.Environment) {
				t.Fatalf("parsed envelope differs: %+v", got)
			}
			// The returned envelope does not alias the input.
			keep := string(got.NormalizedResult)
			for i := range data {
				data[i] = ' '
			}
			if string(got.NormalizedResult) != keep {
				t.Fatal("parsed envelope aliases its input")
			}
		})
	}
}

func TestSealedShapeMatchesSpec(t *testing.T) {
	data := sealed(t, sampleComparison())
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	want := envelopeFields()
	sort.Strings(want)
	if !reflect.DeepEqual(keys, want) {
		t.Fatalf("envelope keys %v; want %v", keys, want)
	}
	for field, raw := range map[string]string{
		"schema_version": "2", "subject": "null", "environment": "null", "raw_result": "null",
		"limitations": "[]", "locations": "[]", "evidence_links": `["` + leftID + `","` + rightID + `"]`,
	} {
		if string(m[field]) != raw {
			t.Errorf("%s = %s; want %s", field, m[field], raw)
		}
	}
}

func TestSealDefaultsAndFailures(t *testing.T) {
	e := &Envelope{
		Provider: Provider{ID: "p", Name: "P", Version: "1"}, PredicateType: "example/v1", Operation: "op",
		Parameters: json.RawMessage(`{}`), Confidence: Inferred, Authority: AuthorityExternalService,
	}
	data := sealed(t, e)
	if e.Limitations == nil || e.Locations == nil || e.EvidenceLinks == nil || string(e.RawResult) != "null" || string(e.NormalizedResult) != "null" {
		t.Fatalf("Seal did not fill defaults: %+v", e)
	}
	mustParse(t, data)

	if err := Seal(nil); err == nil {
		t.Error("Seal(nil) succeeded")
	}
	if _, err := ComputeID(nil); err == nil {
		t.Error("ComputeID(nil) succeeded")
	}

	bad := sampleCapture()
	bad.Parameters = nil
	bad.Authority = "root"
	bad.EvidenceID = "ev_stale"
	err := Seal(bad)
	var list IssueList
	if !errors.As(err, &list) || !hasIssue(list, CodeWrongType, "$.parameters") || !hasIssue(list, CodeInvalidValue, "$.authority") {
		t.Fatalf("Seal(invalid) = %v; want an IssueList naming $.parameters and $.authority", err)
	}
	if bad.EvidenceID != "" {
		t.Errorf("failed Seal left evidence_id %q", bad.EvidenceID)
	}

	notJSON := sampleCapture()
	notJSON.NormalizedResult = json.RawMessage(`{"a":`)
	if err := Seal(notJSON); err == nil || notJSON.EvidenceID != "" {
		t.Errorf("Seal(invalid raw JSON) = %v, id %q", err, notJSON.EvidenceID)
	}
	inexact := sampleCapture()
	inexact.NormalizedResult = json.RawMessage(`{"size":9007199254740993}`)
	if err := Seal(inexact); !errors.As(err, &list) || !hasIssue(list, CodeInexactNumber, "$.normalized_result.size") {
		t.Errorf("Seal(inexact number) = %v", err)
	}
}

// reorder rewrites a JSON value with every object's members in reverse
// sorted order and indentation, a different byte sequence with equal meaning.
func reorder(t *testing.T, raw json.RawMessage) json.RawMessage {
	t.Helper()
	var out bytes.Buffer
	var walk func(json.RawMessage)
	walk = func(v json.RawMessage) {
		v = bytes.TrimSpace(v)
		switch v[0] {
		case '{':
			var m map[string]json.RawMessage
			if err := json.Unmarshal(v, &m); err != nil {
				t.Fatal(err)
			}
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Sort(sort.Reverse(sort.StringSlice(keys)))
			out.WriteString("{\n")
			for i, k := range keys {
				if i > 0 {
					out.WriteString(" ,\n")
				}
				kb, _ := json.Marshal(k)
				out.Write(kb)
				out.WriteString(" : ")
				walk(m[k])
			}
			out.WriteString("\n}")
		case '[':
			var items []json.RawMessage
			if err := json.Unmarshal(v, &items); err != nil {
				t.Fatal(err)
			}
			out.WriteString("[ ")
			for i, it := range items {
				if i > 0 {
					out.WriteString(", ")
				}
				walk(it)
			}
			out.WriteString(" ]")
		default:
			out.Write(v)
		}
	}
	walk(raw)
	return out.Bytes()
}

func TestKeyReorderingKeepsEvidenceID(t *testing.T) {
	e := sampleCapture()
	data := sealed(t, e)
	re := reorder(t, data)
	if bytes.Equal(re, data) {
		t.Fatal("reorder did not change the bytes")
	}
	got := mustParse(t, re)
	if got.EvidenceID != e.EvidenceID {
		t.Fatalf("reordered envelope has id %s; want %s", got.EvidenceID, e.EvidenceID)
	}
	// Reordering the open-ended parts in Go and re-sealing gives the same id.
	e2 := sampleCapture()
	e2.Parameters = reorder(t, e2.Parameters)
	e2.NormalizedResult = reorder(t, e2.NormalizedResult)
	e2.Locations[0] = reorder(t, e2.Locations[0])
	sealed(t, e2)
	if e2.EvidenceID != e.EvidenceID {
		t.Fatalf("re-sealed reordered envelope has id %s; want %s", e2.EvidenceID, e.EvidenceID)
	}
}

// TestTamperingIsDetected changes every byte of normalized_result,
// parameters and limitations in a sealed envelope, one at a time and in
// two ways each. Every change that alters the canonical meaning must be
// rejected; the few that do not (such as a hex digit's case in a \u escape)
// may be accepted.
func TestTamperingIsDetected(t *testing.T) {
	e := sampleCapture()
	e.Limitations = append(e.Limitations, "a < b & c") // encoded with \u escapes
	data := sealed(t, e)
	original, err := Canonicalize(data)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"normalized_result", "parameters", "limitations"} {
		prefix := []byte(`"` + field + `":` + string(m[field]))
		start := bytes.Index(data, prefix)
		if start < 0 {
			t.Fatalf("%s not found", field)
		}
		start += len(field) + 3
		end := start + len(m[field])
		var mismatches, rejected int
		for i := start; i < end; i++ {
			for _, flip := range []byte{0x01, 0x20} {
				mutated := bytes.Clone(data)
				mutated[i] ^= flip
				got, issues := Parse(mutated)
				canon, cerr := Canonicalize(mutated)
				if got != nil {
					if cerr != nil || !bytes.Equal(canon, original) {
						t.Fatalf("%s: accepted a tampered envelope (byte %d %q→%q):\n%s", field, i, data[i], mutated[i], mutated)
					}
					continue
				}
				rejected++
				if cerr == nil && !bytes.Equal(canon, original) && hasIssue(issues, CodeIDMismatch, "$.evidence_id") {
					mismatches++
				}
			}
		}
		t.Logf("%s: %d bytes, %d of %d mutations rejected, %d as evidence_id mismatches", field, end-start, rejected, 2*(end-start), mismatches)
		if mismatches == 0 || rejected < (end-start) {
			t.Errorf("%s: %d of %d mutations rejected, %d as evidence_id mismatches", field, rejected, 2*(end-start), mismatches)
		}
	}
}

func TestEvidenceIDMismatch(t *testing.T) {
	e := sampleCapture()
	data := sealed(t, e)
	for _, other := range []string{leftID, IDPrefix + strings.Repeat("0", 64)} {
		tampered := bytes.Replace(data, []byte(e.EvidenceID), []byte(other), 1)
		got, issues := Parse(tampered)
		if got != nil || len(issues) != 1 || !hasIssue(issues, CodeIDMismatch, "$.evidence_id") {
			t.Fatalf("Parse(wrong id) = %v, %v", got, issues)
		}
		if !strings.Contains(issues[0].Message, e.EvidenceID) {
			t.Errorf("mismatch message lacks the recomputed id: %s", issues[0].Message)
		}
	}
	// Re-sealing after a change gives a new, valid id.
	e.Limitations = append(e.Limitations, "another")
	old := e.EvidenceID
	mustParse(t, sealed(t, e))
	if e.EvidenceID == old {
		t.Fatal("changing limitations did not change the id")
	}
}

func TestSubjectIsReducedForTheID(t *testing.T) {
	base := sampleCapture()
	data := sealed(t, base)

	moved := sampleCapture()
	moved.Subject.LocalPath = "/opt/other/node"
	moved.Subject.Name = "node-copy"
	sealed(t, moved)
	if moved.EvidenceID != base.EvidenceID {
		t.Fatalf("local_path/name changed the id: %s vs %s", moved.EvidenceID, base.EvidenceID)
	}
	// Editing local_path in the JSON needs no re-seal.
	edited := bytes.Replace(data, []byte(`"local_path":"/usr/bin/node"`), []byte(`"local_path":"/elsewhere/node"`), 1)
	if got := mustParse(t, edited); got.Subject.LocalPath != "/elsewhere/node" {
		t.Fatalf("local_path = %q", got.Subject.LocalPath)
	}

	for name, change := range map[string]func(*Subject){
		"digest":       func(s *Subject) { s.Digest.SHA256 = strings.Repeat("cd", 32) },
		"format":       func(s *Subject) { s.Format = "mach-o" },
		"architecture": func(s *Subject) { s.Architecture = "arm64" },
	} {
		e := sampleCapture()
		change(e.Subject)
		sealed(t, e)
		if e.EvidenceID == base.EvidenceID {
			t.Errorf("changing subject %s kept the id", name)
		}
	}
	tampered := bytes.Replace(data, []byte(strings.Repeat("ab", 32)), []byte(strings.Repeat("cd", 32)), 1)
	if _, issues := Parse(tampered); !hasIssue(issues, CodeIDMismatch, "$.evidence_id") {
		t.Fatalf("changed subject digest accepted: %v", issues)
	}

	none := sampleCapture()
	none.Subject = nil
	none.Environment = nil
	sealed(t, none)
	if none.EvidenceID == base.EvidenceID {
		t.Fatal("null subject kept the id")
	}
}
