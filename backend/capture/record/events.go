package record

// This file holds the record's observation types that the capture engine
// marshals into Record's raw lists (shim_events, protocol_events,
// replay_transitions), and the vocabulary of their enumerated fields and of
// the file states and checkpoints.

// Reserved checkpoint names: the first and the last checkpoint of every
// capture.
const (
	CheckpointBefore          = "before"
	CheckpointAfterSettlement = "after_settlement"
)

// File types of a FileState.
const (
	FileTypeFile      = "file"
	FileTypeSymlink   = "symlink"
	FileTypeDirectory = "directory"
	FileTypeOther     = "other"
)

// Statuses of a FileEffect.
const (
	EffectCreated   = "created"
	EffectDeleted   = "deleted"
	EffectModified  = "modified"
	EffectUnchanged = "unchanged"
)

// Outcomes of a ShimEvent.
const (
	ShimOutcomeMatched   = "matched"
	ShimOutcomeUnmatched = "unmatched"
	ShimOutcomeExhausted = "exhausted"
)

// ShimEvent is one call of a command shim (docs/formats/capture-record.md, shim_events).
// RouteIndex is the route that answered a matched call, the first route
// whose arguments matched an exhausted call, and null for an unmatched
// call. Command, Arguments and WorkingDirectory are normalized and
// redacted.
type ShimEvent struct {
	Sequence         int      `json:"sequence"`
	AtMS             int      `json:"at_ms"`
	Command          string   `json:"command"`
	RouteIndex       *int     `json:"route_index"`
	Arguments        []string `json:"arguments"`
	WorkingDirectory string   `json:"working_directory"`
	Outcome          string   `json:"outcome"`
}

// RedactedRequestBody is the data recorded for every request body and
// client WebSocket message that is not empty.
const RedactedRequestBody = "<redacted-request-body>"

// Protocol event vocabulary.
const (
	ProtocolHTTP      = "http"
	ProtocolWebSocket = "websocket"

	DirectionRequest  = "request"
	DirectionResponse = "response"
	DirectionReceived = "received"
	DirectionSent     = "sent"

	ReplayOutcomeMatched        = "matched"
	ReplayOutcomeUnmatched      = "unmatched"
	ReplayOutcomeExhausted      = "exhausted"
	ReplayOutcomeLimitExhausted = "limit_exhausted"
	ReplayOutcomeSent           = "sent"
	ReplayOutcomeDisconnected   = "disconnected"
	ReplayOutcomeClosed         = "closed"
)

// ProtocolEvent is one loopback replay observation (docs/formats/capture-record.md,
// protocol_events). Path and Data are normalized and redacted like other
// recorded text; Method and Path are null for WebSocket messages and
// closes.
type ProtocolEvent struct {
	Sequence  int     `json:"sequence"`
	AtMS      int     `json:"at_ms"`
	Protocol  string  `json:"protocol"`
	Direction string  `json:"direction"`
	Method    *string `json:"method"`
	Path      *string `json:"path"`
	Data      string  `json:"data"`
	Outcome   string  `json:"outcome"`
}

// ReplayTransition is one committed transition of the capture's replay
// machine (docs/formats/capture-record.md, replay_transitions). SensitiveAliases names the
// variables captured as sensitive, never their values.
type ReplayTransition struct {
	Sequence         int      `json:"sequence"`
	AtMS             int      `json:"at_ms"`
	TransitionID     string   `json:"transition_id"`
	StateBefore      string   `json:"state_before"`
	StateAfter       string   `json:"state_after"`
	SensitiveAliases []string `json:"sensitive_aliases"`
}
