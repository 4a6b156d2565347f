package capture

import "github.com/gatehouse/gatehouse/backend/capture/record"

// The capture record is owned by package record (types, vocabulary and
// record.Verify); Capture produces one. These aliases let the engine's
// code name the types it fills without the package prefix; they are the
// same types, not copies.

// RecordSchemaVersion is the version of the capture record Capture writes
// (record.SchemaVersion).
const RecordSchemaVersion = record.SchemaVersion

// The record's types (see package record for what each guarantees).
type (
	Record               = record.Record
	Manifest             = record.Manifest
	Frame                = record.Frame
	RenderedFrame        = record.RenderedFrame
	InteractionEvent     = record.InteractionEvent
	Exit                 = record.Exit
	Settlement           = record.Settlement
	ProcessSample        = record.ProcessSample
	FilesystemCheckpoint = record.FilesystemCheckpoint
	FileState            = record.FileState
	FileEffect           = record.FileEffect
	JournalEntry         = record.JournalEntry
	ResidualUnknown      = record.ResidualUnknown
	Cleanup              = record.Cleanup
)

// The record's vocabulary (record.Buffer*, record.Outcome*, …).
const (
	BufferNormal    = record.BufferNormal
	BufferAlternate = record.BufferAlternate

	OutcomeDispatched   = record.OutcomeDispatched
	OutcomeTargetExited = record.OutcomeTargetExited
	OutcomeFailed       = record.OutcomeFailed

	ExitReasonExited      = record.ExitReasonExited
	ExitReasonTimeout     = record.ExitReasonTimeout
	ExitReasonIdleTimeout = record.ExitReasonIdleTimeout

	SettlementQuiesced        = record.SettlementQuiesced
	SettlementAliveAtDeadline = record.SettlementAliveAtDeadline
	SettlementUnverifiable    = record.SettlementUnverifiable
	CleanupNotRequired        = record.CleanupNotRequired
	CleanupCleaned            = record.CleanupCleaned
	CleanupFailed             = record.CleanupFailed

	OwnedProcessGroupVerified = record.OwnedProcessGroupVerified
	TemporaryRootRemoved      = record.TemporaryRootRemoved
)
