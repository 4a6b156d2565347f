package record

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// itemFields are the members of the observations that no other check of
// Verify reads member by member (filesystem checkpoints, protocol events
// and replay transitions have their own: checkpoints, replayRecord).
var itemFields = map[string][]string{
	"frames":             Fields(Frame{}),
	"rendered_frames":    Fields(RenderedFrame{}),
	"interaction_events": Fields(InteractionEvent{}),
	"process_samples":    Fields(ProcessSample{}),
	"shim_events":        Fields(ShimEvent{}),
}

// Enumerations of observation members.
var (
	interactionTypes    = []string{"input", "resize", "stdin_close", "signal"}
	interactionOutcomes = []string{OutcomeDispatched, OutcomeTargetExited, OutcomeFailed}
	activeBuffers       = []string{BufferNormal, BufferAlternate}
	shimOutcomes        = []string{ShimOutcomeMatched, ShimOutcomeUnmatched, ShimOutcomeExhausted}
)

// orderFields are the members of an observation that sequenced and
// timed check (and report missing).
var orderFields = map[string]bool{"sequence": true, "at_ms": true, "scheduled_at_ms": true, "dispatched_at_ms": true}

// item checks the members of one observation of list key, an object
// elements decoded, once exactly has checked which members it has:
// sequences and times are sequenced's and timed's, the rest are read here.
// Readers such as compare read these members without checking again.
func (v *verifier) item(key string, m map[string]json.RawMessage, at string) {
	switch key {
	case "frames":
		v.isStrAt(m, at, "data")
	case "rendered_frames":
		for _, k := range []string{"columns", "rows", "cursor_x", "cursor_y"} {
			v.intAt(m, at, k)
		}
		v.enumAt(m, at, "active_buffer", activeBuffers)
		v.strings(m, at, "lines")
		v.isStrAt(m, at, "serialized_state")
	case "interaction_events":
		v.enumAt(m, at, "type", interactionTypes)
		v.isStrAt(m, at, "data")
		v.enumAt(m, at, "outcome", interactionOutcomes)
	case "process_samples":
		v.intAt(m, at, "pid")
		v.intAt(m, at, "parent_pid")
		v.isStrAt(m, at, "command")
		v.nullableInt(m, at, "process_group_id")
		v.nullableInt(m, at, "session_id")
	case "shim_events":
		v.isStrAt(m, at, "command")
		v.nullableInt(m, at, "route_index")
		v.strings(m, at, "arguments")
		v.isStrAt(m, at, "working_directory")
		v.enumAt(m, at, "outcome", shimOutcomes)
	}
}

// enumAt reads member key of m as one of allowed.
func (v *verifier) enumAt(m map[string]json.RawMessage, path, key string, allowed []string) {
	if s, ok := v.strAt(m, path, key, false); ok && !slices.Contains(allowed, s) {
		v.add(path+strictjson.KeyPath(key), CodeInvalidValue, "%q is not one of %v", strictjson.Truncate(s, 40), allowed)
	}
}

// nullableInt reads member key of m as an integer or null.
func (v *verifier) nullableInt(m map[string]json.RawMessage, path, key string) {
	if raw, ok := m[key]; ok && !isNull(raw) {
		v.integer(raw, path+strictjson.KeyPath(key))
	}
}

// strings reads member key of m as an array of strings.
func (v *verifier) strings(m map[string]json.RawMessage, path, key string) {
	a, ok := v.array(m, path, key)
	if !ok {
		return
	}
	for i, raw := range a {
		if k := rawKind(raw); k != 's' {
			v.add(fmt.Sprintf("%s%s[%d]", path, strictjson.KeyPath(key), i), CodeWrongType, "must be a string, not %s", rawKindName(k))
		}
	}
}
