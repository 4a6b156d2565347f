package reactive

import "github.com/gatehouse/gatehouse/backend/internal/strictjson"

// Issue codes. They are stable and machine readable.
const (
	// Document and schema level (shared with backend/internal/strictjson).
	CodeTooLarge       = strictjson.CodeTooLarge       // more bytes, values or trigger nodes than allowed
	CodeInvalidUTF8    = strictjson.CodeInvalidUTF8    // the input is not valid UTF-8
	CodeInvalidJSON    = strictjson.CodeInvalidJSON    // malformed JSON or trailing data
	CodeTooDeep        = strictjson.CodeTooDeep        // JSON nesting or trigger nesting beyond the limit
	CodeDuplicateKey   = strictjson.CodeDuplicateKey   // a member name twice in one object
	CodeInvalidString  = strictjson.CodeInvalidString  // an unpaired UTF-16 surrogate escape
	CodeInexactNumber  = strictjson.CodeInexactNumber  // a number RFC 8785 would change
	CodeTooManyIssues  = strictjson.CodeTooManyIssues  // more issues than the bound
	CodeWrongType      = strictjson.CodeWrongType      // a value of the wrong JSON type (null included)
	CodeUnknownField   = strictjson.CodeUnknownField   // a member the schema does not define
	CodeMissingField   = strictjson.CodeMissingField   // a required member is absent
	CodeInvalidValue   = strictjson.CodeInvalidValue   // outside its enumeration or literal
	CodeNotInteger     = strictjson.CodeNotInteger     // a fractional number where an integer is required
	CodeOutOfRange     = strictjson.CodeOutOfRange     // an integer outside its bounds
	CodeInvalidLength  = strictjson.CodeInvalidLength  // a string outside its length bounds
	CodeTooManyEntries = strictjson.CodeTooManyEntries // an array or object longer than allowed
	CodeTooFewEntries  = strictjson.CodeTooFewEntries  // an array shorter than required
	CodeInvalidVariant = strictjson.CodeInvalidVariant // an unknown kind, type, source or selector
	CodeInvalidName    = "invalid_name"                // an id, name or event id not matching its pattern
	CodeReservedName   = "reserved_name"               // a reserved checkpoint name
	CodeDuplicateEntry = "duplicate_entry"             // a state id, transition id or checkpoint name twice

	// Graph rules.
	CodeUnsupportedVersion  = "unsupported_version"  // version is not 1
	CodeUnknownState        = "unknown_state"        // initial_state or a goto names no state
	CodeUnreachableState    = "unreachable_state"    // no path from the initial state reaches it
	CodeDeadEnd             = "dead_end_state"       // no path from it reaches a finish transition
	CodeAmbiguousTransition = "ambiguous_transition" // same state, priority and trigger as an earlier transition
	CodeDeadlineOrder       = "deadline_order"       // a state deadline beyond the scenario deadline, or the scenario's beyond timeout_ms
	CodeUnknownCheckpoint   = "unknown_checkpoint"   // a checkpoint frontier naming no checkpoint
	CodeCheckpointReuse     = "checkpoint_reuse"     // a checkpoint action on a transition that may fire more than once
	CodeTooManyActions      = "too_many_actions"     // more possible dispatched actions than MaxDispatchedAction

	// Preflight refusals (valid documents this engine refuses before launch).
	CodeRefusedSource   = "refused_source"   // an event trigger on terminal_rendered, lifecycle or replay_transition
	CodeRefusedSelector = "refused_selector" // a send_signal to anything but the root process
	CodeUnmatchableText = "unmatchable_text" // a terminal_text holding a value the capture redacts
)

// Issue is one reason a scenario was rejected: a stable Code, the JSON
// Path of the offending value and a Message for people.
type Issue = strictjson.Issue

// Issues is a non-empty list of issues used as an error.
type Issues []Issue

// Error lists the first few issues and how many there are in all.
func (l Issues) Error() string { return strictjson.ErrorText("invalid reactive scenario", l) }
