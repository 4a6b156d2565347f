package compare

import (
	"strings"

	crecord "github.com/gatehouse/gatehouse/backend/capture/record"
	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// VerifyRecords checks the capture record of each Process Capture
// envelope given with record.Verify, the one check of the record, and
// returns a CodeInvalidCapture *Error naming every failing path of every
// side (Side "left" for the first envelope, "right" for the second; paths
// under $.normalized_result), or nil when all hold. Envelopes of other
// predicates are left to Compare, which refuses them.
//
// Compare and Diffs verify each record this way themselves before
// reading it; VerifyRecords lets a caller (the command line) report every
// failing path of both files without comparing.
func VerifyRecords(left, right *evidence.Envelope) error {
	var issues []Issue
	for i, e := range []*evidence.Envelope{left, right} {
		if e == nil || e.PredicateType != evidence.PredicateProcessCapture {
			continue
		}
		for _, is := range crecord.Verify(e.NormalizedResult) {
			issues = append(issues, Issue{Side: sideName(i), Issue: strictjson.Issue{Path: root + strings.TrimPrefix(is.Path, "$"), Code: is.Code, Message: is.Message}})
		}
	}
	if len(issues) > 0 {
		return newError(CodeInvalidCapture, issues)
	}
	return nil
}
