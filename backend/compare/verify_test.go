package compare

import (
	"errors"
	"testing"
)

func TestVerifyRecordsNamesTheSide(t *testing.T) {
	good := seal(t, finishValid(baseRecord()), nil)
	if err := VerifyRecords(good, good); err != nil {
		t.Fatalf("a valid pair: %v", err)
	}
	bad := seal(t, finish(baseRecord()), nil) // the scenario contradicts the contract
	var ce *Error
	if err := VerifyRecords(bad, good); !errors.As(err, &ce) || ce.Code != CodeInvalidCapture {
		t.Fatalf("err = %v", err)
	}
	if !hasIssue(ce, "left", root+".manifest.comparison_contract", "commitment_mismatch") || hasIssue(ce, "right", root+".manifest.comparison_contract", "commitment_mismatch") {
		t.Errorf("issues = %v", ce.Issues)
	}
	other := *good
	other.PredicateType = "gatehouse.other/v1"
	if err := VerifyRecords(&other, nil); err != nil {
		t.Errorf("another predicate is Compare's to refuse: %v", err)
	}
}
