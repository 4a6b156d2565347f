package runner

import (
	"encoding/json"

	"github.com/gatehouse/gatehouse/backend/bundle"
	"github.com/gatehouse/gatehouse/backend/confine"
	"github.com/gatehouse/gatehouse/backend/proctree"
)

// Status is the outcome of one attempt.
type Status string

// Attempt outcomes. Only StatusSucceeded carries an output.
const (
	StatusSucceeded     Status = "succeeded"
	StatusFailed        Status = "failed"
	StatusTimeout       Status = "timeout"
	StatusCancelled     Status = "cancelled"
	StatusOutputLimit   Status = "output_limit"
	StatusCleanupFailed Status = "cleanup_failed"
	StatusRefused       Status = "refused"
)

// Stable error codes of the envelope (schema and protocol codes from
// package bundle appear too: missing_output, trailing_data, invalid_json,
// truncated_json, invalid_utf8, bom, type_mismatch, …).
const (
	CodeCancelled        = "cancelled"
	CodeTimeout          = "timeout"
	CodeStdoutLimit      = "stdout_limit"
	CodeStderrLimit      = "stderr_limit"
	CodeNonzeroExit      = "nonzero_exit"
	CodeSignaled         = "killed_by_signal"
	CodeCleanupFailed    = "cleanup_failed"
	CodeRuntimeChanged   = "runtime_changed"
	CodeWorkspaceChanged = "workspace_changed"
	CodeStagingFailed    = "staging_failed"
	CodeInvalidInput     = "invalid_input"
	CodeNotAuthorized    = "not_authorized"
	CodeSpawnFailed      = "spawn_failed"
	CodeUnavailable      = "not_executable"
)

// RuntimeInfo names the runtime an attempt ran under.
type RuntimeInfo struct {
	Path    string `json:"path"`
	Version string `json:"version"`
}

// Envelope is the complete, bounded description of one attempt. It never
// contains environment values, secrets or raw stdout; Output is present
// only on success and is the validated result value.
type Envelope struct {
	Status    Status            `json:"status"`
	RunID     string            `json:"runId"`
	AttemptID string            `json:"attemptId"`
	Revision  string            `json:"revision"`
	Runtime   RuntimeInfo       `json:"runtime"`
	ElapsedMs int64             `json:"elapsedMs"`
	ExitCode  *int              `json:"exitCode"`
	Signal    *string           `json:"signal"`
	Output    json.RawMessage   `json:"output,omitempty"`
	Errors    []bundle.Issue    `json:"errors"`
	Cleanup   *proctree.Cleanup `json:"cleanup"`
	// Confinement is exactly what the launcher reported it enforced (nil
	// when nothing was launched).
	Confinement *confine.Report  `json:"confinement"`
	StderrBytes int              `json:"stderrBytes"`
	Progress    *ProgressSummary `json:"progress,omitempty"`
	// ExecutionReceiver is always "ephemeral_process": a fresh process,
	// staging copy, HOME and TMPDIR per attempt, all discarded afterwards.
	ExecutionReceiver string `json:"execution_receiver"`
}

func (e *Envelope) fail(code, path, msg string) {
	e.Errors = append(e.Errors, bundle.Issue{Code: code, Path: path, Message: msg})
}
