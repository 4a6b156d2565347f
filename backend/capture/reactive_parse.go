package capture

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
	"github.com/gatehouse/gatehouse/backend/reactive"
)

// reactive reads the reactive member: null (the default) or a Reactive
// Scenario v1 checked by reactive.Check at "$.reactive" against the
// scenario's timeout_ms and checkpoint names, kept as the compact JSON of
// the scenario with its defaults applied (so they are hashed too).
func (c *checker) reactive(m strictjson.Members, sc *Scenario) json.RawMessage {
	v, ok := m["reactive"]
	if !ok || v.Kind == strictjson.Null {
		return json.RawMessage("null")
	}
	if v.Kind != strictjson.Object {
		c.Add("$.reactive", CodeWrongType, "must be an object or null, not %s", v.Kind)
		return json.RawMessage("null")
	}
	rs := reactive.Check(v, "$.reactive", reactiveContext(sc), c.Issues)
	if rs == nil {
		return json.RawMessage("null")
	}
	// Identifiers are recorded verbatim in reactive_run: none may hold a
	// value the record redacts.
	var secrets []string
	for _, alias := range sc.SecretAliases {
		if v := sc.Environment[alias]; v != "" {
			secrets = append(secrets, v)
		}
	}
	for _, d := range rs.SensitiveInputs() {
		secrets = append(secrets, strings.FieldsFunc(d, func(r rune) bool { return r == '\r' || r == '\n' })...)
	}
	bad := false
	for _, n := range rs.Identifiers("$.reactive") {
		for _, s := range secrets {
			if strings.Contains(n.Value, s) {
				c.Add(n.Path, CodeConflict, "holds a secret alias value or sensitive input, which the record redacts; reactive_run records identifiers verbatim")
				bad = true
				break
			}
		}
	}
	if bad {
		return json.RawMessage("null")
	}
	b, err := json.Marshal(rs)
	if err != nil {
		c.Add("$.reactive", CodeInvalidValue, "cannot be encoded: %v", err)
		return json.RawMessage("null")
	}
	return b
}

func reactiveContext(sc *Scenario) reactive.Context {
	ctx := reactive.Context{TimeoutMS: sc.TimeoutMS}
	for _, cp := range sc.Checkpoints {
		ctx.Checkpoints = append(ctx.Checkpoints, cp.Name)
	}
	return ctx
}

// reactiveScenario returns sc's reactive graph (nil when sc has none).
// It fails only for a Scenario not produced by ParseScenario.
func reactiveScenario(sc *Scenario) (*reactive.Scenario, error) {
	if len(sc.Reactive) == 0 || string(sc.Reactive) == "null" {
		return nil, nil
	}
	rs, issues := reactive.Parse(sc.Reactive, reactiveContext(sc))
	if len(issues) > 0 {
		return nil, fmt.Errorf("capture: reactive scenario: %w", reactive.Issues(issues))
	}
	return rs, nil
}

// PreflightError is a scenario refused before launch because its reactive
// graph uses what the engine does not admit (docs/formats/reactive-scenario.md, "Reactive
// scenarios"): each issue names the refused value's JSON path.
type PreflightError struct{ Issues []Issue }

func (e *PreflightError) Error() string {
	return strictjson.ErrorText("capture refused at preflight", e.Issues)
}

// reactivePreflight refuses, before launch, reactive triggers on
// terminal_rendered, lifecycle and replay_transition, signals to anything
// but the root, and terminal_text literals holding a value recorded text
// never shows (a secret or sensitive input).
func reactivePreflight(sc *Scenario) error {
	rs, err := reactiveScenario(sc)
	if err != nil || rs == nil {
		return err
	}
	if issues := reactive.Preflight(rs, "$.reactive", secretValues(sc)); len(issues) > 0 {
		return &PreflightError{Issues: issues}
	}
	return nil
}

// redactedReactive is sc.Reactive with the data of each sensitive
// send_input action replaced by RedactedInput(len), as the projection
// stores sensitive timed input.
func redactedReactive(sc *Scenario) json.RawMessage {
	rs, err := reactiveScenario(sc)
	if err != nil || rs == nil || len(rs.SensitiveInputs()) == 0 {
		return sc.Reactive
	}
	for i := range rs.States {
		for j := range rs.States[i].On {
			for k, a := range rs.States[i].On[j].Actions {
				if a.Type == reactive.ActionSendInput && a.Sensitive {
					rs.States[i].On[j].Actions[k].Data = RedactedInput(len(a.Data))
				}
			}
		}
	}
	b, err := json.Marshal(rs)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// reactiveSensitiveLines are the lines of the reactive graph's sensitive
// send_input actions, which are redacted like sensitive timed input.
func reactiveSensitiveLines(sc *Scenario) []string {
	rs, err := reactiveScenario(sc)
	if err != nil || rs == nil {
		return nil
	}
	var out []string
	for _, d := range rs.SensitiveInputs() {
		out = append(out, strings.FieldsFunc(d, func(r rune) bool { return r == '\r' || r == '\n' })...)
	}
	return out
}
