package capture

import (
	"fmt"
	"strings"
)

// Issue codes reported by ParseScenario. They are stable and machine
// readable.
const (
	CodeTooLarge       = "too_large"        // the input exceeds MaxScenarioBytes
	CodeInvalidUTF8    = "invalid_utf8"     // the input is not valid UTF-8
	CodeInvalidJSON    = "invalid_json"     // malformed JSON or trailing data
	CodeTooDeep        = "too_deep"         // nesting beyond MaxDepth
	CodeDuplicateKey   = "duplicate_key"    // a member name twice in one object
	CodeInvalidString  = "invalid_string"   // an unpaired UTF-16 surrogate escape
	CodeInexactNumber  = "inexact_number"   // a number RFC 8785 would change
	CodeTooManyIssues  = "too_many_issues"  // more issues than MaxIssues
	CodeWrongType      = "wrong_type"       // a value of the wrong JSON type (null included)
	CodeUnknownField   = "unknown_field"    // a member the schema does not define
	CodeMissingField   = "missing_field"    // a required member is absent
	CodeInvalidValue   = "invalid_value"    // outside its enumeration or literal, or a string holding NUL
	CodeNotInteger     = "not_integer"      // a number with a fractional part where an integer is required
	CodeOutOfRange     = "out_of_range"     // an integer outside its bounds
	CodeInvalidLength  = "invalid_length"   // a string outside its length bounds
	CodeTooManyEntries = "too_many_entries" // an array or object longer than allowed
	CodeTooFewEntries  = "too_few_entries"  // an array shorter than required
	CodeRelativePath   = "relative_path"    // a path that is not absolute
	CodeInvalidName    = "invalid_name"     // a name not matching its pattern
	CodeReservedName   = "reserved_name"    // a reserved environment or checkpoint name
	CodeDuplicateEntry = "duplicate_entry"  // the same name or entry twice
	CodeNotSorted      = "not_sorted"       // an event earlier than the one before it
	CodeAfterTimeout   = "after_timeout"    // an event scheduled after timeout_ms
	CodeMissingSecret  = "missing_secret"   // a secret alias without a non-empty environment value
	CodeInvalidPattern = "invalid_pattern"  // a normalization pattern that does not compile
	CodeConflict       = "conflict"         // two fields that cannot be combined
	CodeInvalidVariant = "invalid_variant"  // an unknown discriminator ("type") value
)

// Issue is one reason a scenario was rejected: a stable Code (one of the
// Code* constants), the JSON Path of the offending value ("$" for the
// document, "$.events[3].at_ms", `$.environment["A-B"]`) and a Message for
// people.
type Issue struct {
	Code    string `json:"code"`
	Path    string `json:"path"`
	Message string `json:"message"`
}

// String formats the issue as "code at path: message".
func (i Issue) String() string { return fmt.Sprintf("%s at %s: %s", i.Code, i.Path, i.Message) }

// IssueList is a non-empty list of issues used as an error.
type IssueList []Issue

// Error lists the first few issues and how many there are in all.
func (l IssueList) Error() string {
	const shown = 5
	var b strings.Builder
	fmt.Fprintf(&b, "invalid scenario: %d issue(s)", len(l))
	for i, is := range l {
		if i == shown {
			fmt.Fprintf(&b, "; and %d more", len(l)-shown)
			break
		}
		b.WriteString("; ")
		b.WriteString(is.String())
	}
	return b.String()
}

// issueList collects issues up to MaxIssues.
type issueList struct {
	list []Issue
	full bool
}

func (l *issueList) add(path, code, format string, args ...any) {
	if l.full {
		return
	}
	if len(l.list) == MaxIssues-1 {
		l.list = append(l.list, Issue{CodeTooManyIssues, "$", fmt.Sprintf("more than %d issues; the rest are not reported", MaxIssues-1)})
		l.full = true
		// The issue that overflowed is dropped; the marker stands for it.
		return
	}
	l.list = append(l.list, Issue{code, path, fmt.Sprintf(format, args...)})
}
