package app

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/gowebpki/jcs"

	"github.com/gatehouse/gatehouse/backend/capture"
	"github.com/gatehouse/gatehouse/backend/evidence"
)

// referenceCaptureEvidence is the Evidence file of rec by the definition
// (docs/formats/capture-record.md), with no shortcut: the record through
// encoding/json (no HTML escaping), the envelope through encoding/json,
// and the evidence_id the SHA-256 of jcs.Transform — the reference RFC
// 8785 library — over the envelope's projection (no evidence_id, no
// subject here).
func referenceCaptureEvidence(t *testing.T, rec *capture.Record) []byte {
	t.Helper()
	result, err := marshalPlain(rec, "")
	if err != nil {
		t.Fatal(err)
	}
	params, _ := json.Marshal(map[string]string{
		"full_scenario_sha256":       rec.Manifest.FullScenarioSHA256,
		"comparison_contract_sha256": rec.Manifest.ComparisonContractSHA256,
	})
	ev := evidence.Envelope{
		SchemaVersion:    evidence.SchemaVersion,
		Provider:         evidence.Provider{ID: evidence.ProcessProviderID, Name: "Gatehouse Process Capture", Version: Version},
		PredicateType:    evidence.PredicateProcessCapture,
		Operation:        evidence.OperationCaptureProcess,
		Parameters:       params,
		RawResult:        json.RawMessage("null"),
		NormalizedResult: result,
		Confidence:       evidence.Observed,
		Authority:        evidence.AuthorityControlledReplay,
		Limitations:      append([]string{}, rec.Limitations...),
		Locations:        []json.RawMessage{},
		EvidenceLinks:    []string{},
	}
	projection, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal(projection, &p); err != nil {
		t.Fatal(err)
	}
	delete(p, "evidence_id")
	projection, err = json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	canonical, err := jcs.Transform(projection)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(canonical)
	ev.EvidenceID = evidence.IDPrefix + hex.EncodeToString(sum[:])
	out, err := marshalPlain(&ev, "")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The saved Evidence of a capture is byte for byte the reference encoding
// of its record (referenceCaptureEvidence), whatever shortcuts the seal
// and the check at save take: a real capture of more than 64 KiB (the
// size from which the seal splices the record) whose output holds "<",
// ">", "&", U+2028, non-ASCII text, control characters and invalid UTF-8,
// and a small one.
func TestCaptureEvidenceIsTheReferenceEncoding(t *testing.T) {
	work := t.TempDir()
	env := captureEnv(t, work)
	for name, script := range map[string]string{
		"large": `i=0; while [ $i -lt 1500 ]; do printf 'line %d <a href="x">&amp;</a> \342\200\250 caf\303\251 \033[31mred\033[0m \001\377 \t"q" \\\\ end\n' $i; i=$((i+1)); done`,
		"small": `printf 'small <b>&</b>\n'`,
	} {
		t.Run(name, func(t *testing.T) {
			r := cli(t, env, "capture-process", writeScenario(t, work, script, nil))
			if r.status != 0 {
				t.Fatalf("capture-process: %d %s", r.status, r.stderr)
			}
			ev, issues := evidence.Parse([]byte(r.stdout))
			if len(issues) > 0 {
				t.Fatal(issues)
			}
			if name == "large" && len(ev.NormalizedResult) < 64<<10 {
				t.Fatalf("the record is only %d bytes", len(ev.NormalizedResult))
			}
			var rec capture.Record
			if err := json.Unmarshal(ev.NormalizedResult, &rec); err != nil {
				t.Fatal(err)
			}
			want := referenceCaptureEvidence(t, &rec)
			if r.stdout != string(want) {
				t.Fatalf("the CLI's Evidence is not the reference encoding of its record (%d vs %d bytes)", len(r.stdout), len(want))
			}
			_, got, _, err := captureEvidence(&rec)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("captureEvidence is not the reference encoding (%d vs %d bytes)", len(got), len(want))
			}
		})
	}
}
