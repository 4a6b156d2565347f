package replay

import "github.com/gatehouse/gatehouse/backend/internal/strictjson"

// Issue codes. They are stable and machine readable; each rejection of
// the replay machine schema, of a direct run or of its events has one.
const (
	// Document level.
	CodeTooLarge      = strictjson.CodeTooLarge      // more bytes or JSON values than allowed
	CodeInvalidUTF8   = strictjson.CodeInvalidUTF8   // the input is not valid UTF-8
	CodeInvalidJSON   = strictjson.CodeInvalidJSON   // malformed JSON, a byte order mark or trailing data
	CodeTooDeep       = strictjson.CodeTooDeep       // nesting beyond the depth limit
	CodeDuplicateKey  = strictjson.CodeDuplicateKey  // a member name twice in one object
	CodeTooManyIssues = strictjson.CodeTooManyIssues // more issues than MaxIssues

	// Schema level.
	CodeWrongType      = strictjson.CodeWrongType      // a value of the wrong JSON type (null included)
	CodeUnknownField   = strictjson.CodeUnknownField   // a member the schema does not define
	CodeMissingField   = strictjson.CodeMissingField   // a required member is absent
	CodeInvalidValue   = strictjson.CodeInvalidValue   // outside its enumeration, or a forbidden character
	CodeInvalidVariant = strictjson.CodeInvalidVariant // an unknown protocol, action type or source
	CodeNotInteger     = strictjson.CodeNotInteger     // a fractional number where an integer is required
	CodeOutOfRange     = strictjson.CodeOutOfRange     // an integer outside its bounds
	CodeInvalidLength  = strictjson.CodeInvalidLength  // a string outside its length bounds
	CodeInvalidName    = "invalid_name"                // a name, id, variable, method, path or header name not matching its pattern
	CodeTooManyEntries = strictjson.CodeTooManyEntries // an array or object longer than allowed
	CodeTooFewEntries  = strictjson.CodeTooFewEntries  // an array shorter than required
	CodeDuplicateEntry = "duplicate_entry"             // a state name, transition id, header or variable twice

	// Machine rules (docs/formats/replay-machine.md).
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
const MaxIssues = strictjson.DefaultMaxIssues

// Issue is one reason an input was rejected: a stable Code (one of the
// Code* constants), the JSON Path of the offending value ("$" for the
// document, "$.machine.transitions[3].guards[0].variable",
// `$.events[2].headers["x-key"]`) and a Message for people. Messages name
// fields, ids and states but never repeat header values or bodies.
type Issue = strictjson.Issue

// Issues is a non-empty list of issues used as an error.
type Issues []Issue

// Error lists the first few issues and how many there are in all.
func (l Issues) Error() string { return strictjson.ErrorText("invalid replay input", l) }
