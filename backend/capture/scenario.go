// Package capture implements Process Capture v4 (spec docs/formats/capture-scenario.md): the
// strict Scenario that describes one approved command, its commitments, and
// the PTY capture engine that runs the command under a proctree.Supervisor
// and records what it did.
//
// The package keeps no mutable package-level state.
package capture

import (
	"encoding/json"
	"fmt"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
	"github.com/gatehouse/gatehouse/backend/loopback"
)

// Limits of ParseScenario.
const (
	// MaxScenarioBytes is the largest scenario document ParseScenario
	// reads (larger input files are refused: docs/formats/README.md).
	MaxScenarioBytes = 64 << 20
	// MaxDepth is the deepest nesting ParseScenario admits (the scenario
	// object is depth 1). It leaves room below the Evidence envelope's own
	// limit of 512 for a scenario embedded in a capture record.
	MaxDepth = 256
	// MaxIssues is the most issues ParseScenario reports; when there are
	// more, the last one has code CodeTooManyIssues.
	MaxIssues = strictjson.DefaultMaxIssues
)

// Scenario is one validated Process Capture scenario with every default
// applied. Values produced by ParseScenario satisfy every rule of
// docs/formats/capture-scenario.md; json.Marshal of such a value re-parses to an equal
// Scenario (slices and maps are always present, never null).
type Scenario struct {
	Approved           bool              `json:"approved"`
	Executable         string            `json:"executable"`
	Arguments          []string          `json:"arguments"`
	WorkingDirectory   string            `json:"working_directory"`
	Environment        map[string]string `json:"environment"`
	InheritEnvironment []string          `json:"inherit_environment"`
	SecretAliases      []string          `json:"secret_aliases"`
	NetworkAccess      string            `json:"network_access"`
	FilesystemRoots    []string          `json:"filesystem_roots"`
	Terminal           Terminal          `json:"terminal"`
	Events             []Event           `json:"events"`
	Checkpoints        []Checkpoint      `json:"checkpoints"`
	CommandShims       []CommandShim     `json:"command_shims"`
	TimeoutMS          int               `json:"timeout_ms"`
	IdleTimeoutMS      int               `json:"idle_timeout_ms"`
	SettleMS           int               `json:"settle_ms"`
	Limits             Limits            `json:"limits"`
	Normalization      Normalization     `json:"normalization"`
	Replay             loopback.Replay   `json:"replay"` // validated by backend/loopback
	// Reactive is the Reactive Scenario v1 object or JSON null, kept as
	// compact JSON; another package validates its content.
	Reactive json.RawMessage `json:"reactive"`
}

// Terminal is the PTY geometry.
type Terminal struct {
	Columns    int `json:"columns"`
	Rows       int `json:"rows"`
	Scrollback int `json:"scrollback"`
}

// Event types, checkpoint trigger types, shim termination types and the
// signals a scenario may name.
const (
	EventInput  = "input"
	EventResize = "resize"
	EventSignal = "signal"

	TriggerTime            = "time"
	TriggerTerminalLiteral = "terminal_literal"
	TriggerRootExit        = "root_exit"
	TriggerSettled         = "settled"

	TerminationExit   = "exit"
	TerminationSignal = "signal"
)

// Event is one timed interaction. Type selects which fields are meaningful
// (and marshalled): input → Data, Sensitive; resize → Columns, Rows;
// signal → Signal (SIGINT, SIGTERM or SIGKILL).
type Event struct {
	Type      string
	AtMS      int
	Data      string
	Sensitive bool
	Columns   int
	Rows      int
	Signal    string
}

// MarshalJSON writes only the fields of the event's type.
func (e Event) MarshalJSON() ([]byte, error) {
	switch e.Type {
	case EventInput:
		return json.Marshal(struct {
			Type      string `json:"type"`
			AtMS      int    `json:"at_ms"`
			Data      string `json:"data"`
			Sensitive bool   `json:"sensitive"`
		}{e.Type, e.AtMS, e.Data, e.Sensitive})
	case EventResize:
		return json.Marshal(struct {
			Type    string `json:"type"`
			AtMS    int    `json:"at_ms"`
			Columns int    `json:"columns"`
			Rows    int    `json:"rows"`
		}{e.Type, e.AtMS, e.Columns, e.Rows})
	case EventSignal:
		return json.Marshal(struct {
			Type   string `json:"type"`
			AtMS   int    `json:"at_ms"`
			Signal string `json:"signal"`
		}{e.Type, e.AtMS, e.Signal})
	}
	return nil, fmt.Errorf("capture: marshal event: unknown type %q", e.Type)
}

// Checkpoint is a named filesystem snapshot and what triggers it.
type Checkpoint struct {
	Name    string  `json:"name"`
	Trigger Trigger `json:"trigger"`
}

// Trigger says when a checkpoint is taken. Type selects the fields:
// time → AtMS; terminal_literal → Value, Occurrence; root_exit and settled
// have none.
type Trigger struct {
	Type       string
	AtMS       int
	Value      string
	Occurrence int
}

// MarshalJSON writes only the fields of the trigger's type.
func (t Trigger) MarshalJSON() ([]byte, error) {
	switch t.Type {
	case TriggerTime:
		return json.Marshal(struct {
			Type string `json:"type"`
			AtMS int    `json:"at_ms"`
		}{t.Type, t.AtMS})
	case TriggerTerminalLiteral:
		return json.Marshal(struct {
			Type       string `json:"type"`
			Value      string `json:"value"`
			Occurrence int    `json:"occurrence"`
		}{t.Type, t.Value, t.Occurrence})
	case TriggerRootExit, TriggerSettled:
		return json.Marshal(struct {
			Type string `json:"type"`
		}{t.Type})
	}
	return nil, fmt.Errorf("capture: marshal checkpoint trigger: unknown type %q", t.Type)
}

// CommandShim is a command placed first on the target's PATH that answers
// calls whose argv (after the command name) exactly matches a route.
type CommandShim struct {
	Name   string      `json:"name"`
	Routes []ShimRoute `json:"routes"`
}

// ShimRoute is one exact-argument answer of a CommandShim.
type ShimRoute struct {
	Arguments   []string     `json:"arguments"`
	Outputs     []ShimOutput `json:"outputs"`
	Termination Termination  `json:"termination"`
	MaxCalls    int          `json:"max_calls"`
}

// ShimOutput is one timed chunk a shim writes.
type ShimOutput struct {
	AtMS   int    `json:"at_ms"`
	Stream string `json:"stream"` // "stdout" or "stderr"
	Data   string `json:"data"`
}

// Termination ends a shim call: exit → Code (0–255); signal → Signal.
type Termination struct {
	Type   string
	Code   int
	Signal string
}

// MarshalJSON writes only the fields of the termination's type.
func (t Termination) MarshalJSON() ([]byte, error) {
	switch t.Type {
	case TerminationExit:
		return json.Marshal(struct {
			Type string `json:"type"`
			Code int    `json:"code"`
		}{t.Type, t.Code})
	case TerminationSignal:
		return json.Marshal(struct {
			Type   string `json:"type"`
			Signal string `json:"signal"`
		}{t.Type, t.Signal})
	}
	return nil, fmt.Errorf("capture: marshal shim termination: unknown type %q", t.Type)
}

// Limits bound what a capture records; exceeding one truncates it.
type Limits struct {
	OutputBytes       int `json:"output_bytes"`
	Frames            int `json:"frames"`
	Files             int `json:"files"`
	FileBytes         int `json:"file_bytes"`
	Processes         int `json:"processes"`
	ProtocolEvents    int `json:"protocol_events"`
	ProtocolBodyBytes int `json:"protocol_body_bytes"`
	Connections       int `json:"connections"`
	FilesystemDepth   int `json:"filesystem_depth"`
}

// Normalization says which volatile values recorded text has replaced.
type Normalization struct {
	Paths        bool      `json:"paths"`
	PIDs         bool      `json:"pids"`
	Ports        bool      `json:"ports"`
	TimeBucketMS int       `json:"time_bucket_ms"`
	Patterns     []Pattern `json:"patterns"`
}

// Pattern is one extra normalization: every match of the Go (RE2) regular
// expression Pattern is replaced by Replacement.
type Pattern struct {
	Pattern     string `json:"pattern"`
	Replacement string `json:"replacement"`
}
