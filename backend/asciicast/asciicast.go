// Package asciicast converts between Gatehouse terminal evidence and the
// asciicast interchange format of asciinema
// (https://docs.asciinema.org/manual/asciicast/v2 and …/v3).
//
// Export writes a Process Capture v4 record (or an imported recording) as
// asciicast v2: a header line and one [time, code, data] event per line —
// "o" for every raw terminal frame, "i" for dispatched input (sensitive
// input only as its redaction placeholder, which is all a capture keeps),
// "r" for resizes and "m" markers for checkpoints, signals and stdin
// closes.
//
// Import reads asciicast v1, v2 or v3 into a Recording: a terminal-only
// capture. It is not Process Capture Evidence and never claims to be: its
// Evidence has its own predicate (PredicateTerminalRecording), provider
// and operation, the asciicast file as its subject, authority
// historical-reference, and a record whose non-terminal dimensions
// (interaction, exit, filesystem, protocol, process, shim) are "unknown",
// each with a residual unknown saying so. The raw frames are the "o"
// events; rendered frames are rebuilt with the renderer Capture uses
// (capture.Renderer: xterm.js in a helper process), one after each "o"
// and each "r" event, so the
// viewer can seek and compare screens as it does for captures.
//
// Import is strict and bounded: the input is refused above MaxInputBytes
// before parsing; more than MaxEvents events or more than MaxOutputBytes
// of output data stop it; every problem is reported with its 1-based line
// number and the JSON path inside that line (a v1 document's with line
// 0 and the path in the document), and nothing is ever repaired or
// skipped silently. Import is as lenient as asciinema's own reader and
// player (a byte order mark, unknown header keys and event codes, null
// env values, a size of 0, a fractional timestamp, idle_time_limit 0, v2
// comments and exit events), and every tolerance that applied is one of
// the recording's limitations (lenient.go). Rebuilt screens are bounded by MaxRenderedBytes:
// when one after every event would exceed it, only every k-th is kept
// (k = 2, 4, 8, …; the raw frames stay complete, so replay is still
// exact) and a limitation says so. Evidence refuses a recording whose
// sealed JSON would exceed evidence.MaxEnvelopeBytes.
// Nothing here keeps package-level mutable state.
package asciicast

import (
	"fmt"
	"strings"

	"github.com/gatehouse/gatehouse/backend/capture"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// Limits of Import. They match the largest Process Capture limits
// (docs/formats/capture-scenario.md: frames ≤ 1e5, output_bytes ≤ 1e7, terminal 1–1000) and
// the 64 MiB input limit of docs/formats/README.md.
const (
	// MaxInputBytes is the largest asciicast file Import reads; larger
	// input is refused before parsing.
	MaxInputBytes = 64 << 20
	// MaxEvents is the most event lines (of every code) a file may hold.
	MaxEvents = 100_000
	// MaxOutputBytes bounds the sum of the data of all "o" events.
	MaxOutputBytes = 10_000_000
	// MaxRenderedBytes bounds the rebuilt rendered frames (lines plus
	// serialized state, summed over all frames); past it, frames are
	// thinned (see the package documentation).
	MaxRenderedBytes = 32 << 20
	// MaxTerminalSize bounds columns and rows (header and "r" events).
	MaxTerminalSize = 1000
	// MaxDurationMS bounds the time of the last event: 7 days.
	MaxDurationMS = 7 * 24 * 3600 * 1000
	// MaxDataBytes bounds the data of one event and each header string.
	MaxDataBytes = 1 << 20
	// MaxIssues is the most issues Import reports; the last one is then
	// CodeTooManyIssues.
	MaxIssues = 100
)

// Evidence values of an imported recording.
const (
	// PredicateTerminalRecording is the predicate_type of an imported
	// asciicast: a terminal-only recording, not Process Capture Evidence.
	PredicateTerminalRecording = "gatehouse.terminal-recording/v1"
	// ProviderID is the provider id of imported recordings.
	ProviderID = "gatehouse-asciicast-import"
	// ProviderName names that provider.
	ProviderName = "Gatehouse asciicast import"
	// ProviderVersion is its version.
	ProviderVersion = "1"
	// OperationImport is the operation of an imported recording.
	OperationImport = "import_asciicast"
	// RecordingSchemaVersion is the schema_version of a Recording.
	RecordingSchemaVersion = 1
	// OriginLabel is the origin every imported Recording carries, for
	// lists and badges.
	OriginLabel = "Imported asciicast — terminal only"
)

// Issue codes of Import. They are stable and machine readable.
const (
	CodeTooLarge          = "too_large"           // the input is above MaxInputBytes
	CodeEmpty             = "empty"               // no header line
	CodeInvalidUTF8       = "invalid_utf8"        // a line is not valid UTF-8
	CodeInvalidJSON       = "invalid_json"        // a line is not one JSON value
	CodeWrongType         = "wrong_type"          // a value of the wrong JSON type
	CodeMissingField      = "missing_field"       // a required member is absent
	CodeUnknownField      = "unknown_field"       // a member the format does not define
	CodeInvalidValue      = "invalid_value"       // a value outside what the format allows
	CodeUnsupported       = "unsupported_version" // a version other than 2 or 3
	CodeTimeOrder         = "time_order"          // a v2 time before the previous one
	CodeUnknownEvent      = "unknown_event"       // an event code the version does not define
	CodeTooManyEvents     = "too_many_events"     // more than MaxEvents events
	CodeOutputTooLarge    = "output_too_large"    // more than MaxOutputBytes of "o" data
	CodeRenderedTooLarge  = "rendered_too_large"  // the sealed recording would exceed evidence.MaxEnvelopeBytes
	CodeUnrenderable      = "unrenderable"        // the terminal emulator failed on the output
	CodeCommentNotAllowed = "comment_not_allowed" // a "#" comment line in v2, or as the header
	CodeTooManyIssues     = "too_many_issues"     // more than MaxIssues problems
)

// Issue is one reason an asciicast file was rejected: the 1-based Line
// (0 for the file as a whole) and the issue every Gatehouse parser reports,
// whose Path is the JSON path inside that line ("$" is the line's value:
// "$.term.cols", "$[0]"), with a stable Code and a Message for people that
// never echoes more than a short excerpt of the input.
type Issue struct {
	Line int `json:"line"`
	strictjson.Issue
}

// String formats the issue as "line N: code at path: message".
func (i Issue) String() string {
	return fmt.Sprintf("line %d: %s at %s: %s", i.Line, i.Code, i.Path, i.Message)
}

// Error is a rejected import: every Issue found, in line order.
type Error struct{ Issues []Issue }

// Error returns a summary naming the first few issues.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "asciicast: %d issue(s)", len(e.Issues))
	for i, is := range e.Issues {
		if i == 3 {
			b.WriteString("; …")
			break
		}
		b.WriteString("; ")
		b.WriteString(is.String())
	}
	return b.String()
}

// Recording is the normalized_result of an imported recording
// (PredicateTerminalRecording). Frames, RenderedFrames and
// InteractionEvents have the shapes of the capture record's lists of the
// same names (docs/formats/capture-record.md), so a viewer replays both alike; there are no
// process, filesystem, shim or protocol observations, and Dimensions and
// ResidualUnknowns say so.
type Recording struct {
	SchemaVersion     int                        `json:"schema_version"`
	Origin            Origin                     `json:"origin"`
	Terminal          Size                       `json:"terminal"`
	Frames            []capture.Frame            `json:"frames"`
	RenderedFrames    []capture.RenderedFrame    `json:"rendered_frames"`
	InteractionEvents []capture.InteractionEvent `json:"interaction_events"`
	Markers           []Marker                   `json:"markers"`
	Dimensions        Dimensions                 `json:"dimensions"`
	ResidualUnknowns  []capture.ResidualUnknown  `json:"residual_unknowns"`
	Truncated         bool                       `json:"truncated"`
	Limitations       []string                   `json:"limitations"`
}

// Origin says where a Recording came from: always an imported asciicast
// file, identified by its SHA-256. Optional header values are null when
// the file has none.
type Origin struct {
	Kind          string   `json:"kind"` // "imported_asciicast"
	Label         string   `json:"label"`
	Format        string   `json:"format"` // "asciicast"
	Version       int      `json:"version"`
	FileName      string   `json:"file_name"`
	FileSHA256    string   `json:"file_sha256"`
	FileBytes     int      `json:"file_bytes"`
	Title         *string  `json:"title"`
	Command       *string  `json:"command"`
	Timestamp     *int64   `json:"timestamp"`
	IdleTimeLimit *float64 `json:"idle_time_limit"`
	TermType      *string  `json:"term_type"`
	// ExitStatus is the status of a v3 "x" event; it is recorded, but
	// the exit dimension stays unknown (nothing observed the process).
	ExitStatus *int `json:"exit_status"`
}

// OriginKind is Origin.Kind of every imported Recording.
const OriginKind = "imported_asciicast"

// Size is a terminal size.
type Size struct {
	Columns int `json:"columns"`
	Rows    int `json:"rows"`
}

// Marker is an asciicast "m" event: a labelled point in time.
type Marker struct {
	Sequence int    `json:"sequence"`
	AtMS     int    `json:"at_ms"`
	Label    string `json:"label"`
}

// Dimensions are the comparison dimensions of a Recording: terminal is
// "observed" (from the file), every other one "unknown".
type Dimensions struct {
	Terminal    string `json:"terminal"`
	Interaction string `json:"interaction"`
	Exit        string `json:"exit"`
	Filesystem  string `json:"filesystem"`
	Protocol    string `json:"protocol"`
	Process     string `json:"process"`
	Shim        string `json:"shim"`
}

// Dimension values of a Recording.
const (
	DimensionObserved = "observed"
	DimensionUnknown  = "unknown"
)

// unknownDimensions are the dimensions an asciicast cannot speak for, with
// the reason recorded as a residual unknown.
var unknownDimensions = [...]struct{ scope, reason string }{
	{"interaction", "imported from an asciicast file: input events are recorded only when the recorder enabled them, and their scheduling and delivery were not observed"},
	{"exit", "imported from an asciicast file: no process exit or settlement was observed"},
	{"filesystem", "imported from an asciicast file: no filesystem was observed"},
	{"protocol", "imported from an asciicast file: no network protocol was observed"},
	{"process", "imported from an asciicast file: no process tree was observed"},
	{"shim", "imported from an asciicast file: no command shims were used"},
}
