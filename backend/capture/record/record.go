// Package record owns the Process Capture v4 record: its Go types, the
// vocabulary of its enumerated fields, and Verify, the one check of its
// invariants (docs/formats/capture-record.md). The capture engine
// (backend/capture) produces a Record, the app seals it into Evidence
// with NewEnvelope, and readers re-check it with Verify: the evidence
// library on every read and a capture before it is saved. Check is Verify
// that also returns the proof, Verified, which compare takes instead of
// verifying a record again. The package has no PTY, emulator or process
// dependencies: it reads and checks bytes only.
package record

import "encoding/json"

// SchemaVersion is the version of the capture record this package
// defines and the only one Verify accepts.
const SchemaVersion = 4

// Record is a Process Capture v4 record (docs/formats/capture-record.md, "The capture
// record"). Capture fills every list (never null). ProtocolEvents and
// ReplayTransitions hold marshalled ProtocolEvent and ReplayTransition
// values, empty without replay; ReactiveRun is null
// without a reactive graph, else its reactive.Run; the
// "before" and "after_settlement" checkpoints are always recorded (see
// checkpoints for files and effects). Each element of ShimEvents is a
// marshalled ShimEvent.
type Record struct {
	SchemaVersion         int                    `json:"schema_version"`
	Manifest              Manifest               `json:"manifest"`
	Normalization         json.RawMessage        `json:"normalization"`
	Frames                []Frame                `json:"frames"`
	RenderedFrames        []RenderedFrame        `json:"rendered_frames"`
	InteractionEvents     []InteractionEvent     `json:"interaction_events"`
	Exit                  Exit                   `json:"exit"`
	Settlement            Settlement             `json:"settlement"`
	ProcessSamples        []ProcessSample        `json:"process_samples"`
	FilesystemCheckpoints []FilesystemCheckpoint `json:"filesystem_checkpoints"`
	ShimEvents            []json.RawMessage      `json:"shim_events"`
	ProtocolEvents        []json.RawMessage      `json:"protocol_events"`
	ReplayTransitions     []json.RawMessage      `json:"replay_transitions"`
	ReactiveRun           json.RawMessage        `json:"reactive_run"` // JSON null, or a reactive.Run
	EventJournal          []JournalEntry         `json:"event_journal"`
	FilesBefore           []FileState            `json:"files_before"`
	FilesAfter            []FileState            `json:"files_after"`
	FilesystemEffects     []FileEffect           `json:"filesystem_effects"`
	Truncated             bool                   `json:"truncated"`
	Limitations           []string               `json:"limitations"`
	ResidualUnknowns      []ResidualUnknown      `json:"residual_unknowns"`
	Cleanup               Cleanup                `json:"cleanup"`
}

// Manifest identifies the run and commits to what it ran: every *_sha256
// except executable_sha256 is the evidence.Digest of the value embedded
// beside it; executable_sha256 is the SHA-256 of the executable's bytes.
type Manifest struct {
	GatehouseVersion         string          `json:"gatehouse_version"`
	ProviderVersion          string          `json:"provider_version"`
	Platform                 string          `json:"platform"`
	Architecture             string          `json:"architecture"`
	PTYBackend               string          `json:"pty_backend"`
	StartedAt                string          `json:"started_at"`   // RFC 3339, UTC
	CompletedAt              string          `json:"completed_at"` // RFC 3339, UTC, ≥ StartedAt
	Scenario                 json.RawMessage `json:"scenario"`
	ComparisonContract       json.RawMessage `json:"comparison_contract"`
	ShimPlan                 json.RawMessage `json:"shim_plan"`
	ReplayPlan               json.RawMessage `json:"replay_plan"`
	FullScenarioSHA256       string          `json:"full_scenario_sha256"`
	ComparisonContractSHA256 string          `json:"comparison_contract_sha256"`
	ExecutableSHA256         string          `json:"executable_sha256"`
	NormalizationSHA256      string          `json:"normalization_sha256"`
	ShimPlanSHA256           string          `json:"shim_plan_sha256"`
	ReplayPlanSHA256         string          `json:"replay_plan_sha256"`
}

// Frame is one raw PTY chunk, normalized and redacted. Sequences run
// 0, 1, 2, … with non-decreasing AtMS.
type Frame struct {
	Sequence int    `json:"sequence"`
	AtMS     int    `json:"at_ms"`
	Data     string `json:"data"`
}

// Active buffers of a RenderedFrame.
const (
	BufferNormal    = "normal"
	BufferAlternate = "alternate"
)

// RenderedFrame is the emulated screen after a raw chunk or a resize:
// the visible rows padded to Columns, the cursor, the active buffer and a
// serialized state, all normalized like raw text.
type RenderedFrame struct {
	Sequence        int      `json:"sequence"`
	AtMS            int      `json:"at_ms"`
	Columns         int      `json:"columns"`
	Rows            int      `json:"rows"`
	CursorX         int      `json:"cursor_x"`
	CursorY         int      `json:"cursor_y"`
	ActiveBuffer    string   `json:"active_buffer"`
	Lines           []string `json:"lines"`
	SerializedState string   `json:"serialized_state"`
}

// Interaction outcomes.
const (
	OutcomeDispatched   = "dispatched"
	OutcomeTargetExited = "target_exited"
	OutcomeFailed       = "failed"
)

// InteractionEvent is one scheduled event and what became of it. Data is
// the input text (RedactedInput(n) when sensitive), "COLSxROWS" for a
// resize, or the signal name.
type InteractionEvent struct {
	Sequence       int    `json:"sequence"`
	ScheduledAtMS  int    `json:"scheduled_at_ms"`
	DispatchedAtMS int    `json:"dispatched_at_ms"`
	Type           string `json:"type"`
	Data           string `json:"data"`
	Outcome        string `json:"outcome"`
}

// Exit reasons.
const (
	ExitReasonExited      = "exited"
	ExitReasonTimeout     = "timeout"
	ExitReasonIdleTimeout = "idle_timeout"
)

// Exit is how the root process ended. Code is set only when Reason is
// "exited" and the root exited normally; Signal when a signal ended it.
type Exit struct {
	Code   *int    `json:"code"`
	Signal *string `json:"signal"`
	Reason string  `json:"reason"`
}

// Settlement states and cleanup outcomes.
const (
	SettlementQuiesced        = "quiesced"
	SettlementAliveAtDeadline = "alive_at_deadline"
	SettlementUnverifiable    = "unverifiable"
	CleanupNotRequired        = "not_required"
	CleanupCleaned            = "cleaned"
	CleanupFailed             = "failed"
)

// Settlement is what remained of the tree after the root ended: quiesced
// with cleanup not_required, or alive_at_deadline/unverifiable with cleanup
// cleaned or failed.
type Settlement struct {
	State          string `json:"state"`
	ElapsedMS      int    `json:"elapsed_ms"`
	CleanupOutcome string `json:"cleanup_outcome"`
}

// ProcessSample is one observation of a member of the owned tree, taken
// when the member is first seen or its identity fields change. With
// normalization.pids the pid fields hold ordinals instead of real pids: 1
// for the first process the capture recorded, 2 for the next, and 0 for a
// process outside the recorded tree (the root's parent); the real pids in
// recorded text become <pid>.
type ProcessSample struct {
	AtMS           int    `json:"at_ms"`
	PID            int    `json:"pid"`
	ParentPID      int    `json:"parent_pid"`
	Command        string `json:"command"`
	ProcessGroupID *int   `json:"process_group_id"`
	SessionID      *int   `json:"session_id"`
}

// FilesystemCheckpoint is a named snapshot of the filesystem roots.
type FilesystemCheckpoint struct {
	Name      string       `json:"name"`
	AtMS      int          `json:"at_ms"`
	Files     []FileState  `json:"files"`
	Effects   []FileEffect `json:"effects"`
	Truncated bool         `json:"truncated"`
}

// FileState is one entry of a snapshot: Path "<filesystem-root-N>/rel",
// Mode the stat(2) permission, setuid, setgid and sticky bits, Size the
// bytes of a file or symlink target (0 otherwise), SHA256 for files only
// (null past limits.file_bytes), SymlinkTarget for symlinks only.
type FileState struct {
	Path          string  `json:"path"`
	Mode          int     `json:"mode"`
	Size          int64   `json:"size"`
	Type          string  `json:"type"` // file, symlink, directory or other
	SHA256        *string `json:"sha256"`
	SymlinkTarget *string `json:"symlink_target"`
}

// FileEffect is how a file changed between two snapshots (Capture omits
// unchanged entries): Before is null when created, After when deleted.
type FileEffect struct {
	Path   string     `json:"path"`
	Status string     `json:"status"` // created, deleted, modified or unchanged
	Before *FileState `json:"before"`
	After  *FileState `json:"after"`
}

// JournalEntry places one observation in capture order: Collection names
// a record list (or "exit"/"settlement", Index 0) and Index its position.
type JournalEntry struct {
	CaptureOrder int    `json:"capture_order"`
	Collection   string `json:"collection"`
	Index        int    `json:"index"`
}

// ResidualUnknown says what the capture could not observe; Scope is a
// comparison dimension (terminal, interaction, exit, filesystem, protocol,
// process, shim).
type ResidualUnknown struct {
	Scope  string `json:"scope"`
	Reason string `json:"reason"`
}

// Cleanup values of a successful capture.
const (
	OwnedProcessGroupVerified = "verified"
	TemporaryRootRemoved      = "removed"
)

// Cleanup proves the capture's resources are gone. A Record is returned
// without error only with both fields at their success values.
type Cleanup struct {
	OwnedProcessGroup string `json:"owned_process_group"`
	TemporaryRoot     string `json:"temporary_root"`
}
