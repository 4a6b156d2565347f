package strictjson

import (
	"fmt"
	"strings"
)

// Issue codes reported by this package. Callers re-export them under the
// same names; the values are stable and machine readable.
const (
	CodeTooLarge       = "too_large"        // more values than allowed
	CodeInvalidUTF8    = "invalid_utf8"     // the input is not valid UTF-8
	CodeInvalidJSON    = "invalid_json"     // malformed JSON or trailing data
	CodeTooDeep        = "too_deep"         // nesting beyond the depth limit
	CodeDuplicateKey   = "duplicate_key"    // a member name twice in one object
	CodeInvalidString  = "invalid_string"   // an unpaired UTF-16 surrogate escape
	CodeInexactNumber  = "inexact_number"   // a number RFC 8785 would change
	CodeTooManyIssues  = "too_many_issues"  // more issues than the collector's bound
	CodeWrongType      = "wrong_type"       // a value of the wrong JSON type (null included)
	CodeUnknownField   = "unknown_field"    // a member the schema does not define
	CodeMissingField   = "missing_field"    // a required member is absent
	CodeInvalidValue   = "invalid_value"    // a value outside what is allowed
	CodeInvalidVariant = "invalid_variant"  // a union's discriminator outside its kinds (Checker.Variant)
	CodeNotInteger     = "not_integer"      // a fractional number where an integer is required
	CodeOutOfRange     = "out_of_range"     // an integer outside its bounds
	CodeInvalidLength  = "invalid_length"   // a string outside its length bounds
	CodeTooManyEntries = "too_many_entries" // an array or object longer than allowed
	CodeTooFewEntries  = "too_few_entries"  // an array shorter than required
	CodeTrailingData   = "trailing_data"    // data after the value (with Codes.Trailing)
	CodeNotObject      = "not_object"       // a root other than an object (with Options.RootObject)
	CodeForbiddenKey   = "forbidden_key"    // a member name in Options.ForbiddenKeys
)

// DefaultMaxIssues is the bound of a Collector whose Max is zero.
const DefaultMaxIssues = 100

// Issue is one reason an input was rejected: a stable Code, the JSON Path
// of the offending value and a Message for people.
type Issue struct {
	Code    string `json:"code"`
	Path    string `json:"path"`
	Message string `json:"message"`
}

// String formats the issue as "code at path: message".
func (i Issue) String() string { return fmt.Sprintf("%s at %s: %s", i.Code, i.Path, i.Message) }

// ErrorText formats a list of issues as an error message: prefix (and ": ",
// unless prefix is empty), the number of issues and the first few of them.
func ErrorText(prefix string, l []Issue) string {
	const shown = 5
	var b strings.Builder
	if prefix != "" {
		b.WriteString(prefix + ": ")
	}
	fmt.Fprintf(&b, "%d issue(s)", len(l))
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

// Collector gathers issues up to Max (DefaultMaxIssues when zero). With a
// bound above one, the issue that would reach the bound is replaced by a
// CodeTooManyIssues marker at "$" and the rest are dropped. With
// MarkOnOverflow, exactly Max issues are all kept and the marker replaces
// the last of them only when one more arrives.
type Collector struct {
	List           []Issue
	Max            int
	MarkOnOverflow bool
	full           bool
}

// Add records an issue at path with a formatted message.
func (l *Collector) Add(path, code, format string, args ...any) {
	if l.full {
		return
	}
	limit := l.Max
	if limit == 0 {
		limit = DefaultMaxIssues
	}
	if l.MarkOnOverflow {
		if len(l.List) < limit {
			l.List = append(l.List, Issue{code, path, fmt.Sprintf(format, args...)})
			return
		}
		l.List[limit-1] = l.marker(limit)
		l.full = true
		return
	}
	if len(l.List) == limit-1 && limit > 1 {
		// The issue that overflowed is dropped; the marker stands for it.
		l.List = append(l.List, l.marker(limit))
		l.full = true
		return
	}
	l.List = append(l.List, Issue{code, path, fmt.Sprintf(format, args...)})
	if len(l.List) >= limit {
		l.full = true
	}
}

func (l *Collector) marker(limit int) Issue {
	return Issue{CodeTooManyIssues, "$", fmt.Sprintf("more than %d issues; the rest are not reported", limit-1)}
}

// Full reports whether the collector has stopped recording issues.
func (l *Collector) Full() bool { return l.full }

// Empty reports whether no issue has been recorded.
func (l *Collector) Empty() bool { return len(l.List) == 0 }
