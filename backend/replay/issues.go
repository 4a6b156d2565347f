package replay

import (
	"fmt"
	"strings"
)

// Issue codes. They are stable and machine readable; each rejection of
// the replay machine schema, of a direct run or of its events has one.
const (
	// Document level.
	CodeTooLarge      = "too_large"       // more bytes or JSON values than allowed
	CodeInvalidUTF8   = "invalid_utf8"    // the input is not valid UTF-8
	CodeInvalidJSON   = "invalid_json"    // malformed JSON, a byte order mark or trailing data
	CodeTooDeep       = "too_deep"        // nesting beyond the depth limit
	CodeDuplicateKey  = "duplicate_key"   // a member name twice in one object
	CodeTooManyIssues = "too_many_issues" // more issues than MaxIssues

	// Schema level.
	CodeWrongType      = "wrong_type"       // a value of the wrong JSON type (null included)
	CodeUnknownField   = "unknown_field"    // a member the schema does not define
	CodeMissingField   = "missing_field"    // a required member is absent
	CodeInvalidValue   = "invalid_value"    // outside its enumeration, or a forbidden character
	CodeInvalidVariant = "invalid_variant"  // an unknown protocol, action type or source
	CodeNotInteger     = "not_integer"      // a fractional number where an integer is required
	CodeOutOfRange     = "out_of_range"     // an integer outside its bounds
	CodeInvalidLength  = "invalid_length"   // a string outside its length bounds
	CodeInvalidName    = "invalid_name"     // a name, id, variable, method, path or header name not matching its pattern
	CodeTooManyEntries = "too_many_entries" // an array or object longer than allowed
	CodeTooFewEntries  = "too_few_entries"  // an array shorter than required
	CodeDuplicateEntry = "duplicate_entry"  // a state name, transition id, header or variable twice

	// Machine rules (50-compare-replay.md, "Replay machine").
	CodeNoTerminalState          = "no_terminal_state"           // no state is terminal
	CodeTerminalHasTransitions   = "terminal_has_transitions"    // a transition leaves a terminal state
	CodeUnknownState             = "unknown_state"               // initial_state, from or to names no state
	CodeUnreachableState         = "unreachable_state"           // no path from the initial state reaches it
	CodeAmbiguousTransition      = "ambiguous_transition"        // same (from, priority, trigger) as an earlier transition
	CodeCredentialHeader         = "credential_header"           // a trigger matches a credential header literally
	CodeCredentialNotSensitive   = "credential_not_sensitive"    // a credential header captured or compared without a sensitive alias
	CodeUncapturedVariable       = "uncaptured_variable"         // a guard variable not captured on every path before use
	CodeInconsistentSensitivity  = "inconsistent_sensitivity"    // a variable captured both as sensitive and not
	CodeHTTPResponseCount        = "http_response_count"         // an http trigger without exactly one http_response
	CodeActionNotAllowed         = "action_not_allowed"          // an action its trigger's protocol cannot perform
	CodeSourceNotAllowed         = "source_not_allowed"          // a source its trigger (or actions) cannot provide
	CodeUnresolvedActionPath     = "unresolved_action_path"      // an action_json path the action does not hold
	CodeSensitiveNotString       = "sensitive_not_string"        // a sensitive action_json capture that is not a non-empty string
	CodeActionBytesExceeded      = "action_bytes_exceeded"       // direct run: more than MaxActionJSONBytes of action JSON
	CodeActionFieldsExceeded     = "action_fields_exceeded"      // direct run: more than MaxActionFields action text fields
	CodeSensitiveCaptureExceeded = "sensitive_captures_exceeded" // direct run: more than MaxSensitiveCaptureOps possible sensitive captures

	// Events of a direct run.
	CodeNotSorted          = "not_sorted"          // an event earlier than the one before it
	CodeConnectionConflict = "connection_conflict" // one connection id used for HTTP and WebSocket events
)

// MaxIssues is the most issues one parse reports; when there are more, the
// last one has code CodeTooManyIssues.
const MaxIssues = 100

// Issue is one reason an input was rejected: a stable Code (one of the
// Code* constants), the JSON Path of the offending value ("$" for the
// document, "$.machine.transitions[3].guards[0].variable",
// `$.events[2].headers["x-key"]`) and a Message for people. Messages name
// fields, ids and states but never repeat header values or bodies.
type Issue struct {
	Code    string `json:"code"`
	Path    string `json:"path"`
	Message string `json:"message"`
}

// String formats the issue as "code at path: message".
func (i Issue) String() string { return fmt.Sprintf("%s at %s: %s", i.Code, i.Path, i.Message) }

// Issues is a non-empty list of issues used as an error.
type Issues []Issue

// Error lists the first few issues and how many there are in all.
func (l Issues) Error() string {
	const shown = 5
	var b strings.Builder
	fmt.Fprintf(&b, "invalid replay input: %d issue(s)", len(l))
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

// issueList collects issues up to max (MaxIssues when zero).
type issueList struct {
	list []Issue
	max  int
	full bool
}

func (l *issueList) add(path, code, format string, args ...any) {
	if l.full {
		return
	}
	limit := l.max
	if limit == 0 {
		limit = MaxIssues
	}
	if len(l.list) == limit-1 && limit > 1 {
		l.list = append(l.list, Issue{CodeTooManyIssues, "$", fmt.Sprintf("more than %d issues; the rest are not reported", limit-1)})
		l.full = true
		return
	}
	l.list = append(l.list, Issue{code, path, fmt.Sprintf(format, args...)})
	if len(l.list) >= limit {
		l.full = true
	}
}

func (l *issueList) empty() bool { return len(l.list) == 0 }
