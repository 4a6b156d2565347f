package compare

import (
	"testing"

	crecord "github.com/gatehouse/gatehouse/backend/capture/record"
)

func TestCheckCapturesNamesTheSide(t *testing.T) {
	good := seal(t, finishValid(baseRecord()), nil)
	lc, rc, err := CheckCaptures(good, good)
	if err != nil || lc.EvidenceID() != good.EvidenceID || rc.EvidenceID() != good.EvidenceID {
		t.Fatalf("a valid pair: %v", err)
	}
	bad := seal(t, finish(baseRecord()), nil) // the scenario contradicts the contract
	_, _, err = CheckCaptures(bad, good)
	ce := wantError(t, err, CodeInvalidCapture)
	if !hasIssue(ce, "left", root+".manifest.comparison_contract", "commitment_mismatch") || hasIssue(ce, "right", root+".manifest.comparison_contract", "commitment_mismatch") {
		t.Errorf("issues = %v", ce.Issues)
	}
	other := *good
	other.PredicateType = "gatehouse.other/v1"
	_, _, err = CheckCaptures(good, &other)
	if ce := wantError(t, err, CodeInvalidCapture); !hasIssue(ce, "right", "$.predicate_type", "not_a_capture") {
		t.Errorf("issues = %v", ce.Issues)
	}
}

// A Capture cannot be forged: the zero Capture (all another package can
// make without a proof) and a Capture paired with the zero Verified are
// refused, never compared. Checked to fail with readCaptures' and
// NewCapture's Valid checks removed (the zero Capture then failed with a
// plain decode error, not a refusal, and NewCapture accepted no proof).
func TestUnverifiedCapturesAreRefused(t *testing.T) {
	e := env(t, baseRecord())
	good, _, err := CheckCaptures(e, e)
	if err != nil {
		t.Fatal(err)
	}
	_, err = CompareCaptures(Capture{}, good, Options{})
	if ce := wantError(t, err, CodeInvalidRequest); !hasIssue(ce, "left", "$", "unverified") || hasIssue(ce, "right", "$", "") {
		t.Errorf("CompareCaptures issues = %v", ce.Issues)
	}
	_, err = DiffsCaptures(good, Capture{}, 10)
	if ce := wantError(t, err, CodeInvalidRequest); !hasIssue(ce, "right", "$", "unverified") {
		t.Errorf("DiffsCaptures issues = %v", ce.Issues)
	}
	_, err = NewCapture(e, crecord.Verified{})
	if ce := wantError(t, err, CodeInvalidCapture); !hasIssue(ce, "", root, "unverified") {
		t.Errorf("NewCapture issues = %v", ce.Issues)
	}
	_, err = NewCapture(nil, crecord.Verified{})
	wantError(t, err, CodeInvalidCapture)
}

// A proof belongs to the bytes it verified: paired with an envelope whose
// record is another (a proof of a different capture, or the record
// changed after it was verified) it is refused. Checked to fail with
// NewCapture's Holds check removed (the changed record was compared as
// the verified one).
func TestNewCaptureRefusesAProofOfOtherBytes(t *testing.T) {
	a := env(t, baseRecord())
	rec := baseRecord()
	rec["frames"].(arr)[0].(obj)["data"] = "other"
	b := env(t, rec)
	va, issues := crecord.Check(a.NormalizedResult)
	if len(issues) > 0 {
		t.Fatal(issues)
	}
	if _, err := NewCapture(a, va); err != nil {
		t.Fatalf("the envelope's own proof: %v", err)
	}
	_, err := NewCapture(b, va)
	if ce := wantError(t, err, CodeInvalidCapture); !hasIssue(ce, "", root, "unverified") {
		t.Errorf("a proof of another record: %v", ce.Issues)
	}
	changed := *a
	changed.NormalizedResult = append([]byte(nil), a.NormalizedResult...)
	changed.NormalizedResult[len(changed.NormalizedResult)-2] ^= 1 // changed after the check
	if _, err := NewCapture(&changed, va); err == nil {
		t.Error("a record changed after its check was accepted as verified")
	}
}

// A Capture reads the record from its proof, so bytes rewritten in the
// caller's slices after NewCapture are not what is compared. Checked to
// fail with record.Check keeping the caller's slice (unsafe.String)
// instead of its own copy.
func TestCaptureComparesTheVerifiedBytes(t *testing.T) {
	e := env(t, baseRecord())
	raw := append([]byte(nil), e.NormalizedResult...)
	v, issues := crecord.Check(raw)
	if len(issues) > 0 {
		t.Fatal(issues)
	}
	c, err := NewCapture(e, v)
	if err != nil {
		t.Fatal(err)
	}
	for i := range raw {
		raw[i] = '['
	}
	for i := range e.NormalizedResult {
		e.NormalizedResult[i] = '['
	}
	res, err := CompareCaptures(c, c, Options{Mode: ModeExact})
	if err != nil {
		t.Fatalf("the verified record was not compared: %v", err)
	}
	wantStatuses(t, res, Unchanged, nil)
	if _, err := Compare(e, e, Options{}); err == nil {
		t.Error("the rewritten envelope verifies")
	}
}
