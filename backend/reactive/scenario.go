// Package reactive implements Process Reactive Scenario v1
// (docs/formats/reactive-scenario.md): the strict graph parser with
// every validation rule, the preflight refusals, and a Runner that
// evaluates the graph live against the capture's journaled observations.
//
// The package knows nothing about PTYs or processes. The capture engine
// (backend/capture) admits each journaled observation, normalized and
// redacted exactly as it is persisted, to a Runner in capture order, and
// performs the actions the Runner asks for through an Executor. The
// Runner is deterministic: the same observations in the same order give
// the same transition journal.
//
// The package keeps no mutable package-level state.
package reactive

import (
	"encoding/json"
	"fmt"
)

// Version is the only reactive scenario version.
const Version = 1

// Bounds of a reactive scenario.
const (
	MaxStates           = 64
	MaxTransitions      = 32 // per state
	MaxActions          = 16 // per transition
	MaxDeadlineMS       = 300000
	MaxVisits           = 1000
	MaxUses             = 1000
	MaxPriority         = 1_000_000
	MaxTextChars        = 10000
	MaxInputChars       = 65536
	MaxOccurrence       = 1000
	MinCombinator       = 2 // all and any
	MaxCombinator       = 16
	MaxRepeat           = 64
	MaxTriggerDepth     = 8
	MaxTriggerNodes     = 4096 // in the whole graph
	MaxExactFields      = 16
	MaxTerminalSize     = 1000
	MaxNameChars        = 64
	MaxDispatchedAction = 10000 // Σ max_uses × interaction actions over the graph
)

// Trigger kinds.
const (
	KindTerminalText = "terminal_text"
	KindEvent        = "event"
	KindAll          = "all"
	KindAny          = "any"
	KindSequence     = "sequence"
	KindRepeat       = "repeat"
)

// Frontier kinds.
const (
	SinceScenarioStart = "scenario_start"
	SinceStateEntry    = "state_entry"
	SinceCheckpoint    = "checkpoint"
	SinceEventID       = "event_id"
)

// Action types.
const (
	ActionSendInput  = "send_input"
	ActionResize     = "resize"
	ActionCloseStdin = "close_stdin"
	ActionSendSignal = "send_signal"
	ActionCheckpoint = "checkpoint"
)

// Target kinds and the only finish outcome.
const (
	TargetGoto   = "goto"
	TargetFinish = "finish"
	Passed       = "passed"
)

// Signal selectors; only SelectorRoot passes preflight.
const (
	SelectorRoot         = "root"
	SelectorProcessGroup = "process_group"
	SelectorDescendants  = "descendants"
)

// Event sources. SourceTerminalRendered, SourceLifecycle and
// SourceReplayTransition parse but fail preflight.
const (
	SourceTerminalRaw      = "terminal_raw"
	SourceTerminalRendered = "terminal_rendered"
	SourceInteraction      = "interaction"
	SourceLifecycle        = "lifecycle"
	SourceProcess          = "process"
	SourceFilesystem       = "filesystem"
	SourceHTTP             = "http"
	SourceWebsocket        = "websocket"
	SourceShim             = "shim"
	SourceReplayTransition = "replay_transition"
)

// sourceFields are the top-level payload fields an event trigger may name
// per source: the members of the recorded object (docs/formats/reactive-scenario.md).
var sourceFields = map[string][]string{
	SourceTerminalRaw:      {"sequence", "at_ms", "data"},
	SourceTerminalRendered: {"sequence", "at_ms", "columns", "rows", "cursor_x", "cursor_y", "active_buffer", "lines", "serialized_state"},
	SourceInteraction:      {"sequence", "scheduled_at_ms", "dispatched_at_ms", "type", "data", "outcome"},
	SourceLifecycle:        {"event", "code", "signal", "reason", "state", "elapsed_ms", "cleanup_outcome"},
	SourceProcess:          {"at_ms", "pid", "parent_pid", "command", "process_group_id", "session_id"},
	SourceFilesystem:       {"name", "at_ms", "files", "effects", "truncated"},
	SourceHTTP:             {"sequence", "at_ms", "protocol", "direction", "method", "path", "data", "outcome"},
	SourceWebsocket:        {"sequence", "at_ms", "protocol", "direction", "method", "path", "data", "outcome"},
	SourceShim:             {"sequence", "at_ms", "command", "route_index", "arguments", "working_directory", "outcome"},
	SourceReplayTransition: {"sequence", "at_ms", "transition_id", "state_before", "state_after", "sensitive_aliases"},
}

// sources lists the event sources in a stable order for messages.
var sources = []string{SourceTerminalRaw, SourceTerminalRendered, SourceInteraction, SourceLifecycle,
	SourceProcess, SourceFilesystem, SourceHTTP, SourceWebsocket, SourceShim, SourceReplayTransition}

// refusedSources fail preflight: the runtime slice does not admit them.
var refusedSources = map[string]string{
	SourceTerminalRendered: "rendered frames are not admitted to live predicates; use terminal_text or a terminal_raw event",
	SourceLifecycle:        "lifecycle entries are not admitted to live predicates; the root's exit ends the run as target_lost",
	SourceReplayTransition: "replay transitions are not admitted to live predicates",
}

// Scenario is one validated reactive scenario with every default applied.
// Values produced by Parse satisfy every rule; json.Marshal of one
// re-parses to an equal Scenario.
type Scenario struct {
	Version      int     `json:"version"`
	InitialState string  `json:"initial_state"`
	DeadlineMS   int     `json:"deadline_ms"`
	States       []State `json:"states"`
}

// State is one node of the graph. Its transitions are tried by priority
// (higher first); its deadline runs from each entry.
type State struct {
	ID         string       `json:"id"`
	MaxVisits  int          `json:"max_visits"`
	DeadlineMS int          `json:"deadline_ms"`
	On         []Transition `json:"on"`
}

// Transition fires when its trigger is satisfied, it has uses left and
// its goto target has visits left; it performs Actions in order and then
// enters Target.
type Transition struct {
	ID       string   `json:"id"`
	Priority int      `json:"priority"`
	MaxUses  int      `json:"max_uses"`
	When     *Trigger `json:"when"`
	Actions  []Action `json:"actions"`
	Target   Target   `json:"target"`
}

// Target is {kind: goto, state} or {kind: finish, outcome: passed}.
type Target struct {
	Kind    string
	State   string
	Outcome string
}

// MarshalJSON writes only the fields of the target's kind.
func (t Target) MarshalJSON() ([]byte, error) {
	if t.Kind == TargetGoto {
		return json.Marshal(struct {
			Kind  string `json:"kind"`
			State string `json:"state"`
		}{t.Kind, t.State})
	}
	return json.Marshal(struct {
		Kind    string `json:"kind"`
		Outcome string `json:"outcome"`
	}{t.Kind, t.Outcome})
}

// Trigger is one predicate node. Kind selects the fields:
// terminal_text → Text, Occurrence, Since, Consume; event → Source, Exact,
// Occurrence, Since; all and any → Of (2–16); sequence → Of (1–16);
// repeat → Min, Max, Of (exactly one).
type Trigger struct {
	Kind       string
	Text       string
	Occurrence int
	Since      Frontier
	Consume    bool
	Source     string
	Exact      map[string]json.RawMessage
	Of         []*Trigger
	Min, Max   int

	exact []exactField // Exact with decoded values, sorted by name
	id    int          // index among the graph's trigger nodes
}

// MarshalJSON writes only the fields of the trigger's kind.
func (t *Trigger) MarshalJSON() ([]byte, error) {
	switch t.Kind {
	case KindTerminalText:
		return json.Marshal(struct {
			Kind       string   `json:"kind"`
			Text       string   `json:"text"`
			Occurrence int      `json:"occurrence"`
			Since      Frontier `json:"since"`
			Consume    bool     `json:"consume"`
		}{t.Kind, t.Text, t.Occurrence, t.Since, t.Consume})
	case KindEvent:
		return json.Marshal(struct {
			Kind       string                     `json:"kind"`
			Source     string                     `json:"source"`
			Exact      map[string]json.RawMessage `json:"exact"`
			Occurrence int                        `json:"occurrence"`
			Since      Frontier                   `json:"since"`
		}{t.Kind, t.Source, t.Exact, t.Occurrence, t.Since})
	case KindRepeat:
		return json.Marshal(struct {
			Kind string   `json:"kind"`
			Min  int      `json:"min"`
			Max  int      `json:"max"`
			Of   *Trigger `json:"of"`
		}{t.Kind, t.Min, t.Max, t.Of[0]})
	}
	return json.Marshal(struct {
		Kind string     `json:"kind"`
		Of   []*Trigger `json:"of"`
	}{t.Kind, t.Of})
}

// Frontier is where a leaf predicate starts looking: scenario_start,
// state_entry, checkpoint (Name) or event_id (ID).
type Frontier struct {
	Kind string
	Name string
	ID   string
}

// MarshalJSON writes only the fields of the frontier's kind.
func (f Frontier) MarshalJSON() ([]byte, error) {
	switch f.Kind {
	case SinceCheckpoint:
		return json.Marshal(struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		}{f.Kind, f.Name})
	case SinceEventID:
		return json.Marshal(struct {
			Kind string `json:"kind"`
			ID   string `json:"id"`
		}{f.Kind, f.ID})
	}
	return json.Marshal(struct {
		Kind string `json:"kind"`
	}{f.Kind})
}

// Action is one ordered effect of a transition. Type selects the fields:
// send_input → Data, Sensitive; resize → Columns, Rows; close_stdin none;
// send_signal → Signal, Selector; checkpoint → Name.
type Action struct {
	Type      string
	Data      string
	Sensitive bool
	Columns   int
	Rows      int
	Signal    string
	Selector  string
	Name      string
}

// MarshalJSON writes only the fields of the action's type.
func (a Action) MarshalJSON() ([]byte, error) {
	switch a.Type {
	case ActionSendInput:
		return json.Marshal(struct {
			Type      string `json:"type"`
			Data      string `json:"data"`
			Sensitive bool   `json:"sensitive"`
		}{a.Type, a.Data, a.Sensitive})
	case ActionResize:
		return json.Marshal(struct {
			Type    string `json:"type"`
			Columns int    `json:"columns"`
			Rows    int    `json:"rows"`
		}{a.Type, a.Columns, a.Rows})
	case ActionSendSignal:
		return json.Marshal(struct {
			Type     string `json:"type"`
			Signal   string `json:"signal"`
			Selector string `json:"selector"`
		}{a.Type, a.Signal, a.Selector})
	case ActionCheckpoint:
		return json.Marshal(struct {
			Type string `json:"type"`
			Name string `json:"name"`
		}{a.Type, a.Name})
	}
	return json.Marshal(struct {
		Type string `json:"type"`
	}{a.Type})
}

// Dispatched reports whether the action goes to the target through the
// PTY or a signal (and so is recorded as an interaction event).
func (a Action) Dispatched() bool { return a.Type != ActionCheckpoint }

// SensitiveInputs returns the data of every sensitive send_input action,
// which the capture redacts from recorded text like a secret.
func (s *Scenario) SensitiveInputs() []string {
	var out []string
	for _, st := range s.States {
		for _, t := range st.On {
			for _, a := range t.Actions {
				if a.Type == ActionSendInput && a.Sensitive {
					out = append(out, a.Data)
				}
			}
		}
	}
	return out
}

// CheckpointNames returns the names of the graph's checkpoint actions in
// declaration order.
func (s *Scenario) CheckpointNames() []string {
	var out []string
	for _, st := range s.States {
		for _, t := range st.On {
			for _, a := range t.Actions {
				if a.Type == ActionCheckpoint {
					out = append(out, a.Name)
				}
			}
		}
	}
	return out
}

// MaxDispatches is the most dispatched actions a run can perform: the
// sum over transitions of max_uses times their dispatched actions.
func (s *Scenario) MaxDispatches() int {
	n := 0
	for _, st := range s.States {
		for _, t := range st.On {
			for _, a := range t.Actions {
				if a.Dispatched() {
					n += t.MaxUses
				}
			}
		}
	}
	return n
}

// Named is one identifier a scenario declares or references, with its
// JSON path below the scenario.
type Named struct {
	Path  string
	Value string
}

// Identifiers lists every state id, transition id, goto state,
// checkpoint name and frontier name or event id of s, with JSON paths
// below path. These are recorded verbatim in reactive_run.
func (s *Scenario) Identifiers(path string) []Named {
	out := []Named{{path + ".initial_state", s.InitialState}}
	for i, st := range s.States {
		sp := fmt.Sprintf("%s.states[%d]", path, i)
		out = append(out, Named{sp + ".id", st.ID})
		for j, t := range st.On {
			tp := fmt.Sprintf("%s.on[%d]", sp, j)
			out = append(out, Named{tp + ".id", t.ID})
			if t.Target.Kind == TargetGoto {
				out = append(out, Named{tp + ".target.state", t.Target.State})
			}
			for k, a := range t.Actions {
				if a.Type == ActionCheckpoint {
					out = append(out, Named{fmt.Sprintf("%s.actions[%d].name", tp, k), a.Name})
				}
			}
			walk(t.When, tp+".when", func(tr *Trigger, at string) {
				switch tr.Since.Kind {
				case SinceCheckpoint:
					out = append(out, Named{at + ".since.name", tr.Since.Name})
				case SinceEventID:
					out = append(out, Named{at + ".since.id", tr.Since.ID})
				}
			})
		}
	}
	return out
}
