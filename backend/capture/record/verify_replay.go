package record

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
	"github.com/gatehouse/gatehouse/backend/replay"
)

// Issue codes Verify reports for the loopback replay parts of a
// record.
const (
	CodeUnredactedBody   = "unredacted_body"   // a request body or client message recorded as something else than the placeholder
	CodeReplayOveruse    = "replay_overuse"    // more matched calls than the routes' max_calls, or uses than max_uses/max_transitions
	CodeReplayMismatch   = "replay_mismatch"   // a protocol event or transition that contradicts the replay plan or the others
	CodeUnexpectedReplay = "unexpected_replay" // replay observations in a capture whose scenario has no replay of that kind
)

// verifyPlan is the part of manifest.scenario.replay the checks need,
// decoded leniently (the manifest is redacted, so it need not re-parse).
type verifyPlan struct {
	Machine *struct {
		InitialState string `json:"initial_state"`
		Transitions  []struct {
			ID       string `json:"id"`
			From     string `json:"from"`
			To       string `json:"to"`
			MaxUses  int64  `json:"max_uses"`
			Captures []struct {
				Variable  string `json:"variable"`
				Sensitive bool   `json:"sensitive"`
			} `json:"captures"`
		} `json:"transitions"`
		MaxTransitions int64 `json:"max_transitions"`
	} `json:"machine"`
	HTTP []struct {
		Method   string `json:"method"`
		Path     string `json:"path"`
		MaxCalls int64  `json:"max_calls"`
	} `json:"http"`
	Connections []struct {
		Path     string `json:"path"`
		MaxCalls int64  `json:"max_calls"`
	} `json:"websocket_connections"`
	Messages []struct {
		Path     string `json:"path"`
		MaxCalls int64  `json:"max_calls"`
	} `json:"websocket_messages"`
	sums map[string]int64 // maxCalls's, by kind, method and path
}

// requestOutcomes are the outcomes of a request or client message by
// replay mode; responses carry a status or "disconnected".
var (
	staticOutcomes  = []string{ReplayOutcomeMatched, ReplayOutcomeUnmatched, ReplayOutcomeExhausted, ReplayOutcomeLimitExhausted}
	machineOutcomes = []string{replay.OutcomeCommitted, replay.OutcomeUnmatched, replay.OutcomeInvalidState, replay.OutcomeGuardFailed,
		replay.OutcomeTransitionExhausted, replay.OutcomeInvalidCapture, replay.OutcomeUnexpectedReconnect, replay.OutcomeLimitExhausted}
)

// replayRecord checks protocol_events and replay_transitions: their
// shapes and vocabulary (events.go), that request bodies and client
// messages are recorded only as RedactedRequestBody, that responses never
// outnumber requests, that static routes stay within max_calls, and that
// transitions follow the machine of manifest.scenario.replay from its
// initial state within max_uses and max_transitions, one per committed
// event of a complete capture. Without a plan of that kind both lists
// must be empty.
func (v *verifier) replayRecord(rec map[string]json.RawMessage) {
	var manifest struct {
		Scenario struct {
			Replay *verifyPlan `json:"replay"`
		} `json:"scenario"`
	}
	if json.Unmarshal(rec["manifest"], &manifest) != nil {
		return // the manifest has been reported
	}
	plan := manifest.Scenario.Replay
	if plan == nil {
		plan = &verifyPlan{}
	}
	static := len(plan.HTTP)+len(plan.Connections)+len(plan.Messages) > 0
	truncated, _ := v.boolAt(rec, "$", "truncated")
	committed := v.protocolEvents(rec, plan, static)
	v.transitions(rec, plan, committed, truncated)
}

// protocolEvents checks every protocol event and returns how many
// committed a transition.
func (v *verifier) protocolEvents(rec map[string]json.RawMessage, plan *verifyPlan, static bool) int {
	a, ok := v.array(rec, "$", "protocol_events")
	if !ok {
		return 0
	}
	if len(a) > 0 && !static && plan.Machine == nil {
		v.add("$.protocol_events", CodeUnexpectedReplay, "the scenario has no replay, yet %d protocol events are recorded", len(a))
		return 0
	}
	allowed := staticOutcomes
	if plan.Machine != nil {
		allowed = machineOutcomes
	}
	requests, responses := map[string]int{}, map[string]int{}
	matched := map[string]int64{} // by kind and key
	committed := 0
	var m map[string]json.RawMessage
	for i, raw := range a {
		at := elemPath("protocol_events", i)
		e := v.objectInto(m, raw, at, "sequence", "at_ms", "protocol", "direction", "method", "path", "data", "outcome")
		if e == nil {
			continue
		}
		m = e // one map for every event: each is read in its turn
		proto, ok1 := v.strAt(e, at, "protocol", false)
		dir, ok2 := v.strAt(e, at, "direction", false)
		method, hasMethod := v.strAt(e, at, "method", true)
		path, hasPath := v.strAt(e, at, "path", true)
		data, ok3 := v.strAt(e, at, "data", false)
		outcome, ok4 := v.strAt(e, at, "outcome", false)
		if !ok1 || !ok2 || !ok3 || !ok4 {
			continue
		}
		if proto != ProtocolHTTP && proto != ProtocolWebSocket {
			v.add(at+".protocol", CodeInvalidValue, "%q is not http or websocket", strictjson.Truncate(proto, 64))
			continue
		}
		message := dir == DirectionReceived || dir == DirectionSent
		switch {
		case dir != DirectionRequest && dir != DirectionResponse && !message:
			v.add(at+".direction", CodeInvalidValue, "%q is not request, response, received or sent", strictjson.Truncate(dir, 64))
			continue
		case message && proto == ProtocolHTTP:
			v.add(at+".direction", CodeReplayMismatch, "an http event is a request or a response, not %s", dir)
			continue
		case message && (hasMethod || !hasPath):
			v.add(at+".method", CodeReplayMismatch, "a WebSocket message or close has a path and no method")
		case !message && (!hasMethod || !hasPath):
			v.add(at+".method", CodeReplayMismatch, "a request or response has a method and a path")
		}
		switch dir {
		case DirectionRequest, DirectionReceived:
			if data != "" && data != RedactedRequestBody {
				v.add(at+".data", CodeUnredactedBody, "a request body or client message is recorded only as %s", RedactedRequestBody)
			}
			switch {
			case dir == DirectionReceived && outcome == ReplayOutcomeClosed:
				if data != "" {
					v.add(at+".data", CodeReplayMismatch, "a close carries no data")
				}
			case !slices.Contains(allowed, outcome):
				v.add(at+".outcome", CodeInvalidValue, "%q is not an outcome of this replay (%v)", strictjson.Truncate(outcome, 64), allowed)
			case outcome == replay.OutcomeCommitted:
				committed++
			case outcome == ReplayOutcomeMatched:
				key := proto + " " + dir + " " + path
				if proto == ProtocolHTTP {
					key += " " + method
				}
				matched[key]++
				if limit := plan.maxCalls(proto, dir, method, path); matched[key] > limit {
					v.add(at, CodeReplayOveruse, "the routes for %s %s allow %d calls; this is call %d", strictjson.Truncate(method, 32), strictjson.Truncate(path, 200), limit, matched[key])
				}
			}
			if dir == DirectionRequest {
				requests[proto]++
			}
		case DirectionResponse:
			responses[proto]++
			if responses[proto] > requests[proto] {
				v.add(at, CodeReplayMismatch, "%s response %d comes before its request", proto, responses[proto])
			}
			if outcome != ReplayOutcomeDisconnected {
				if n, err := strconv.Atoi(outcome); err != nil || n < 100 || n > 599 || strconv.Itoa(n) != outcome {
					v.add(at+".outcome", CodeInvalidValue, "a response's outcome is its status (100–599) or disconnected, not %q", strictjson.Truncate(outcome, 64))
				}
			}
		case DirectionSent:
			if outcome != ReplayOutcomeSent && outcome != ReplayOutcomeDisconnected {
				v.add(at+".outcome", CodeInvalidValue, "a sent message's outcome is sent or disconnected, not %q", strictjson.Truncate(outcome, 64))
			} else if outcome == ReplayOutcomeDisconnected && data != "" {
				v.add(at+".data", CodeReplayMismatch, "a disconnect carries no data")
			}
		}
	}
	return committed
}

// maxCalls is the sum of max_calls of the static routes a matched event
// could have used (summed once per plan, in sums, as a record may have
// an event per route).
func (p *verifyPlan) maxCalls(proto, dir, method, path string) int64 {
	if p.sums == nil {
		p.sums = map[string]int64{}
		for _, r := range p.HTTP {
			p.sums["h\x00"+r.Method+"\x00"+r.Path] += r.MaxCalls
		}
		for _, r := range p.Connections {
			p.sums["c\x00"+r.Path] += r.MaxCalls
		}
		for _, r := range p.Messages {
			p.sums["m\x00"+r.Path] += r.MaxCalls
		}
	}
	switch {
	case proto == ProtocolHTTP:
		return p.sums["h\x00"+method+"\x00"+path]
	case dir == DirectionRequest:
		return p.sums["c\x00"+path]
	default:
		return p.sums["m\x00"+path]
	}
}

// transitions checks replay_transitions against the machine.
func (v *verifier) transitions(rec map[string]json.RawMessage, plan *verifyPlan, committed int, truncated bool) {
	a, ok := v.array(rec, "$", "replay_transitions")
	if !ok {
		return
	}
	m := plan.Machine
	if m == nil {
		if len(a) > 0 {
			v.add("$.replay_transitions", CodeUnexpectedReplay, "the scenario has no replay machine, yet %d transitions are recorded", len(a))
		}
		return
	}
	if !truncated && len(a) != committed {
		v.add("$.replay_transitions", CodeReplayMismatch, "%d transitions for %d committed protocol events", len(a), committed)
	}
	if int64(len(a)) > m.MaxTransitions {
		v.add("$.replay_transitions", CodeReplayOveruse, "%d transitions; max_transitions is %d", len(a), m.MaxTransitions)
	}
	index := map[string]int{}
	for i, t := range m.Transitions {
		index[t.ID] = i
	}
	uses := map[string]int64{}
	state := m.InitialState
	var em map[string]json.RawMessage
	for i, raw := range a {
		at := elemPath("replay_transitions", i)
		e := v.objectInto(em, raw, at, "sequence", "at_ms", "transition_id", "state_before", "state_after", "sensitive_aliases")
		if e == nil {
			continue
		}
		em = e // one map for every transition: each is read in its turn
		id, ok1 := v.strAt(e, at, "transition_id", false)
		before, ok2 := v.strAt(e, at, "state_before", false)
		after, ok3 := v.strAt(e, at, "state_after", false)
		var aliases []string
		if raw, ok := e["sensitive_aliases"]; ok && json.Unmarshal(raw, &aliases) != nil {
			v.add(at+".sensitive_aliases", CodeWrongType, "must be an array of strings")
			continue
		}
		if !ok1 || !ok2 || !ok3 {
			continue
		}
		k, known := index[id]
		if !known {
			v.add(at+".transition_id", CodeReplayMismatch, "the machine has no transition %q", strictjson.Truncate(id, 64))
			continue
		}
		t := m.Transitions[k]
		if before != t.From || after != t.To {
			v.add(at, CodeReplayMismatch, "transition %q goes from %q to %q", strictjson.Truncate(id, 64), strictjson.Truncate(t.From, 64), strictjson.Truncate(t.To, 64))
		}
		if before != state && !truncated {
			v.add(at+".state_before", CodeReplayMismatch, "the machine was in state %q", strictjson.Truncate(state, 64))
		}
		state = after
		want := []string{}
		for _, c := range t.Captures {
			if c.Sensitive {
				want = append(want, c.Variable)
			}
		}
		if !slices.Equal(aliases, want) {
			v.add(at+".sensitive_aliases", CodeReplayMismatch, "transition %q captures %v as sensitive", strictjson.Truncate(id, 64), want)
		}
		uses[id]++
		if uses[id] > t.MaxUses {
			v.add(at, CodeReplayOveruse, "transition %q allows %d uses; this is use %d", strictjson.Truncate(id, 64), t.MaxUses, uses[id])
		}
	}
}
