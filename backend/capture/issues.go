package capture

import (
	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
	"github.com/gatehouse/gatehouse/backend/loopback"
)

// Issue codes reported by ParseScenario. They are stable and machine
// readable.
const (
	CodeTooLarge       = strictjson.CodeTooLarge       // the input exceeds MaxScenarioBytes
	CodeInvalidUTF8    = strictjson.CodeInvalidUTF8    // the input is not valid UTF-8
	CodeInvalidJSON    = strictjson.CodeInvalidJSON    // malformed JSON or trailing data
	CodeTooDeep        = strictjson.CodeTooDeep        // nesting beyond MaxDepth
	CodeDuplicateKey   = strictjson.CodeDuplicateKey   // a member name twice in one object
	CodeInvalidString  = strictjson.CodeInvalidString  // an unpaired UTF-16 surrogate escape
	CodeInexactNumber  = strictjson.CodeInexactNumber  // a number RFC 8785 would change
	CodeTooManyIssues  = strictjson.CodeTooManyIssues  // more issues than MaxIssues
	CodeWrongType      = strictjson.CodeWrongType      // a value of the wrong JSON type (null included)
	CodeUnknownField   = strictjson.CodeUnknownField   // a member the schema does not define
	CodeMissingField   = strictjson.CodeMissingField   // a required member is absent
	CodeInvalidValue   = strictjson.CodeInvalidValue   // outside its enumeration or literal, or a string holding NUL
	CodeNotInteger     = strictjson.CodeNotInteger     // a number with a fractional part where an integer is required
	CodeOutOfRange     = strictjson.CodeOutOfRange     // an integer outside its bounds
	CodeInvalidLength  = strictjson.CodeInvalidLength  // a string outside its length bounds
	CodeTooManyEntries = strictjson.CodeTooManyEntries // an array or object longer than allowed
	CodeTooFewEntries  = strictjson.CodeTooFewEntries  // an array shorter than required
	CodeRelativePath   = "relative_path"               // a path that is not absolute
	CodeInvalidName    = "invalid_name"                // a name not matching its pattern
	CodeReservedName   = "reserved_name"               // a reserved environment or checkpoint name
	CodeDuplicateEntry = "duplicate_entry"             // the same name or entry twice
	CodeNotSorted      = "not_sorted"                  // an event earlier than the one before it
	CodeAfterTimeout   = "after_timeout"               // an event scheduled after timeout_ms
	CodeMissingSecret  = "missing_secret"              // a secret alias without a non-empty environment value
	CodeInvalidPattern = "invalid_pattern"             // a normalization pattern that does not compile
	CodeConflict       = "conflict"                    // two fields that cannot be combined
	CodeInvalidVariant = strictjson.CodeInvalidVariant // an unknown discriminator ("type") value

	CodeCredentialHeader = loopback.CodeCredentialHeader // a static replay route that matches a credential header literally
)

// Issue is one reason a scenario was rejected: a stable Code (one of the
// Code* constants), the JSON Path of the offending value ("$" for the
// document, "$.events[3].at_ms", `$.environment["A-B"]`) and a Message for
// people.
type Issue = strictjson.Issue

// IssueList is a non-empty list of issues used as an error.
type IssueList []Issue

// Error lists the first few issues and how many there are in all.
func (l IssueList) Error() string { return strictjson.ErrorText("invalid scenario", l) }
