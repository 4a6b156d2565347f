package compare

import (
	"fmt"
	"strings"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// Error codes of the structured errors Compare and ParseTraceSpec return.
// They are stable and machine readable.
const (
	// CodeInvalidRequest: the call itself is wrong (a nil envelope, a
	// negative maximum age).
	CodeInvalidRequest = "invalid_request"
	// CodeInvalidCapture: an envelope is not Process Capture Evidence or
	// its capture record breaks the record schema or one of its
	// invariants; Issues names every failing path.
	CodeInvalidCapture = "invalid_capture"
	// CodeIncompatibleSchemaVersions: the two capture records have
	// different schema_version values.
	CodeIncompatibleSchemaVersions = "incompatible_schema_versions"
	// CodeUnsupportedSchemaVersion: both records have a schema_version
	// this package cannot read.
	CodeUnsupportedSchemaVersion = "unsupported_schema_version"
	// CodeIncompatibleContracts: the records commit to different
	// comparison contracts.
	CodeIncompatibleContracts = "incompatible_comparison_contracts"
	// CodeStaleCapture: a capture completed longer ago than the maximum
	// capture age allows.
	CodeStaleCapture = "stale_capture"
	// CodeInvalidTraceSpec: the trace spec was rejected; Issues names
	// every rejection with its own code and path.
	CodeInvalidTraceSpec = "invalid_trace_spec"
)

// CategoryInvalid is the category of every error of this package: the
// inputs are at fault, and retrying with the same inputs fails again.
const CategoryInvalid = "invalid_input"

// Error is a structured comparison failure: {code, category, message,
// retryable, remediation} as docs/formats/comparison.md requires, plus the
// issues behind it. Message is fixed for each code; what varies (paths,
// digests, ages) is in Issues.
type Error struct {
	Code        string  `json:"code"`
	Category    string  `json:"category"`
	Message     string  `json:"message"`
	Retryable   bool    `json:"retryable"`
	Remediation string  `json:"remediation"`
	Issues      []Issue `json:"issues,omitempty"`
}

// Issue is one reason behind an Error: the issue every Gatehouse parser
// reports (Path, a JSON path from the root of the input in the one path
// syntax, "$.normalized_result.frames[2].at_ms" for an envelope,
// "$.events[0].id" for a trace spec; Code, stable; Message, for people and
// never echoing more than a short excerpt of the input) and the Side of
// the comparison it is about: "left", "right" or "" (the trace spec, the
// request).
type Issue struct {
	Side string `json:"side,omitempty"`
	strictjson.Issue
}

// String formats the issue as "[side] code at path: message".
func (i Issue) String() string {
	if i.Side != "" {
		return fmt.Sprintf("%s: %s at %s: %s", i.Side, i.Code, i.Path, i.Message)
	}
	return fmt.Sprintf("%s at %s: %s", i.Code, i.Path, i.Message)
}

// Error returns the message followed by the first few issues.
func (e *Error) Error() string {
	const shown = 5
	var b strings.Builder
	b.WriteString("compare: ")
	b.WriteString(e.Message)
	for i, is := range e.Issues {
		if i == shown {
			fmt.Fprintf(&b, "; and %d more", len(e.Issues)-shown)
			break
		}
		b.WriteString("; ")
		b.WriteString(is.String())
	}
	return b.String()
}

var messages = map[string][2]string{ // code → message, remediation
	CodeInvalidRequest: {"invalid comparison request",
		"Pass two Process Capture Evidence envelopes and a non-negative max_capture_age_ms."},
	CodeInvalidCapture: {"invalid Process Capture Evidence",
		"Compare only unmodified Process Capture v4 Evidence as written by capture-process; the issues name every failing path."},
	CodeIncompatibleSchemaVersions: {"incompatible capture schema versions",
		"Capture both sides with the same Gatehouse version, then compare again."},
	CodeUnsupportedSchemaVersion: {"unsupported capture schema version",
		"Only Process Capture v4 records (schema_version 4) can be compared; capture again with this Gatehouse version."},
	CodeIncompatibleContracts: {"incompatible comparison contracts",
		"Capture both sides from scenarios with the same comparison contract (everything but executable, arguments and environment values)."},
	CodeStaleCapture: {"capture is older than max_capture_age_ms",
		"Capture again, or raise max_capture_age_ms."},
	CodeInvalidTraceSpec: {"invalid trace spec",
		"Fix the trace spec at the paths the issues name (see docs/formats/trace-spec.md)."},
}

func newError(code string, issues []Issue) *Error {
	m := messages[code]
	return &Error{Code: code, Category: CategoryInvalid, Message: m[0], Remediation: m[1], Issues: issues}
}
