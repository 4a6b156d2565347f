package reactive

import (
	"strings"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// Journal locates observations of the capture record a run belongs to.
type Journal interface {
	// Order returns the capture order of the observation with event id
	// id ("frames[3]"), false when the record has no such observation in
	// its event_journal.
	Order(id string) (int, bool)
	// Len is the number of event_journal entries.
	Len() int
}

// VerifyRun re-checks a recorded run (decoded at path, "$.reactive_run")
// against the scenario that produced it and the record's journal, and
// reports every violation to issues. It never repairs anything.
//
// Checked: the shape of Run; status completed exactly with outcome
// passed; transitions with sequences 0, 1, 2, …, non-decreasing at_ms
// and admitted_order within the journal, each leaving the state the
// previous one entered (the initial state first) by one of that state's
// transitions and entering its target (null for finish, which only the
// last transition of a passed run takes), within max_uses and
// max_visits; matched event ids that exist and were admitted no later
// than admitted_order; one action evidence id per action (fewer only on
// the last transition of a run stopped by action_rejected or
// target_lost), each an existing interaction event or checkpoint as the
// action's type says; active_state where the run ended; no control on a
// passed run and otherwise exactly one, of the outcome's kind, in the
// active state, after every transition, pinning a last admitted order at
// or after every transition's within the journal.
func VerifyRun(n *strictjson.Node, sc *Scenario, path string, j Journal, issues *strictjson.Collector) {
	v := &runVerifier{Checker: strictjson.Checker{Issues: issues}, sc: sc, j: j}
	v.run(n, path)
}

type runVerifier struct {
	strictjson.Checker
	sc *Scenario
	j  Journal
}

func (v *runVerifier) run(n *strictjson.Node, path string) {
	m, _ := v.Object(n, path, "status", "outcome", "active_state", "controls", "transitions")
	if m == nil {
		return
	}
	status, _ := v.enum(m, path, "status", StatusCompleted, StatusStopped)
	outcome, okOutcome := v.enum(m, path, "outcome", Outcomes()...)
	if status != "" && okOutcome && (status == StatusCompleted) != (outcome == OutcomePassed) {
		v.Add(path+".status", CodeInvalidValue, "status %s does not agree with outcome %s (completed exactly when passed)", status, outcome)
	}
	active, _ := v.ReqStr(m, path, "active_state")

	// Replay the transition journal over the graph.
	state := v.sc.InitialState
	visits := map[string]int{state: 1}
	uses := map[string]int{}
	lastAt, lastOrder := 0, -1
	finished := false
	v.List(m, path, "transitions", true, 0, 1<<30, func(i int, e *strictjson.Node, at string) bool {
		sm, _ := v.Object(e, at, "sequence", "at_ms", "transition_id", "state_before", "state_after",
			"matched_event_ids", "action_evidence_ids", "admitted_order")
		if sm == nil {
			return false
		}
		if finished {
			v.Add(at, CodeInvalidValue, "a transition follows a finish transition")
		}
		if seq, ok := v.ReqInt(sm, at, "sequence", 0, 1<<30); ok && seq != i {
			v.Add(at+".sequence", CodeInvalidValue, "sequence %d at position %d; sequences run 0, 1, 2, …", seq, i)
		}
		if t, ok := v.ReqInt(sm, at, "at_ms", 0, 1<<40); ok {
			if t < lastAt {
				v.Add(at+".at_ms", CodeInvalidValue, "at_ms %d is before the previous transition's %d", t, lastAt)
			}
			lastAt = max(lastAt, t)
		}
		order, orderOK := v.ReqInt(sm, at, "admitted_order", 0, 1<<40)
		if orderOK {
			if order < lastOrder {
				v.Add(at+".admitted_order", CodeInvalidValue, "admitted_order %d is before the previous transition's %d", order, lastOrder)
			}
			if order >= v.j.Len() {
				v.Add(at+".admitted_order", CodeInvalidValue, "admitted_order %d is beyond the %d journal entries", order, v.j.Len())
			}
			lastOrder = max(lastOrder, order)
		}
		before, _ := v.ReqStr(sm, at, "state_before")
		if before != state {
			v.Add(at+".state_before", CodeInvalidValue, "the run was in state %s, not %s", strictjson.Truncate(state, 64), strictjson.Truncate(before, 64))
		}
		id, _ := v.ReqStr(sm, at, "transition_id")
		t := v.transition(state, id)
		if t == nil {
			v.Add(at+".transition_id", CodeUnknownState, "state %s has no transition %s", strictjson.Truncate(state, 64), strictjson.Truncate(id, 64))
			return false
		}
		uses[id]++
		if uses[id] > t.MaxUses {
			v.Add(at+".transition_id", CodeInvalidValue, "transition %s allows %d uses; this is use %d", id, t.MaxUses, uses[id])
		}
		if after, ok := sm["state_after"]; ok {
			switch {
			case t.Target.Kind == TargetFinish && after.Kind != strictjson.Null:
				v.Add(at+".state_after", CodeInvalidValue, "transition %s finishes the run: state_after must be null", id)
			case t.Target.Kind == TargetGoto && (after.Kind != strictjson.String || after.Str != t.Target.State):
				v.Add(at+".state_after", CodeInvalidValue, "transition %s enters state %s", id, t.Target.State)
			}
		} else {
			v.Add(at+".state_after", CodeMissingField, "required field is missing")
		}
		if t.Target.Kind == TargetFinish {
			finished = true
		} else {
			state = t.Target.State
			visits[state]++
			if st := v.state(state); st != nil && visits[state] > st.MaxVisits {
				v.Add(at+".state_after", CodeInvalidValue, "state %s allows %d visits; this is visit %d", state, st.MaxVisits, visits[state])
			}
		}
		v.ids(sm, at, "matched_event_ids", func(_, o int, _, idAt string) {
			if orderOK && o > order {
				v.Add(idAt, CodeInvalidValue, "the observation was admitted at order %d, after the transition fired at %d", o, order)
			}
		}, 1)
		v.ids(sm, at, "action_evidence_ids", func(k, _ int, eid, idAt string) {
			if k >= len(t.Actions) {
				v.Add(idAt, CodeInvalidValue, "transition %s has %d actions", id, len(t.Actions))
				return
			}
			want := "interaction_events["
			if !t.Actions[k].Dispatched() {
				want = "filesystem_checkpoints["
			}
			if !strings.HasPrefix(eid, want) {
				v.Add(idAt, CodeInvalidValue, "a %s action is recorded in %s", t.Actions[k].Type, strings.TrimSuffix(want, "["))
			}
		}, 0)
		if e, ok := sm["action_evidence_ids"]; ok && e.Kind == strictjson.Array && len(e.Elems) < len(t.Actions) {
			cut := outcome == OutcomeActionRejected || outcome == OutcomeTargetLost
			if !cut || i != v.count(m)-1 {
				v.Add(at+".action_evidence_ids", CodeInvalidValue, "transition %s performed %d actions; only the last transition of a run stopped by action_rejected or target_lost may have fewer", id, len(t.Actions))
			}
		}
		return true
	})
	if outcome == OutcomePassed && !finished {
		v.Add(path+".outcome", CodeInvalidValue, "a passed run ends with a finish transition")
	}
	if outcome != "" && outcome != OutcomePassed && finished {
		v.Add(path+".outcome", CodeInvalidValue, "the run took a finish transition, so its outcome is passed")
	}
	if active != "" && active != state {
		v.Add(path+".active_state", CodeInvalidValue, "the run ended in state %s", strictjson.Truncate(state, 64))
	}
	v.controls(m, path, outcome, state, lastAt, lastOrder)
}

// controls checks the control list against the outcome.
func (v *runVerifier) controls(m strictjson.Members, path, outcome, state string, lastAt, lastOrder int) {
	want := 1
	if outcome == OutcomePassed {
		want = 0
	}
	v.List(m, path, "controls", true, 0, 1<<30, func(i int, e *strictjson.Node, at string) bool {
		cm, _ := v.Object(e, at, "sequence", "kind", "at_ms", "state", "last_admitted_order")
		if cm == nil {
			return false
		}
		if seq, ok := v.ReqInt(cm, at, "sequence", 0, 1<<30); ok && seq != i {
			v.Add(at+".sequence", CodeInvalidValue, "sequence %d at position %d", seq, i)
		}
		if k, ok := v.enum(cm, at, "kind", Outcomes()...); ok && outcome != "" && k != outcome {
			v.Add(at+".kind", CodeInvalidValue, "the run's outcome is %s", outcome)
		}
		if t, ok := v.ReqInt(cm, at, "at_ms", 0, 1<<40); ok && t < lastAt {
			v.Add(at+".at_ms", CodeInvalidValue, "the control at %d ms is before the last transition at %d ms", t, lastAt)
		}
		if s, ok := v.ReqStr(cm, at, "state"); ok && s != state {
			v.Add(at+".state", CodeInvalidValue, "the run ended in state %s", strictjson.Truncate(state, 64))
		}
		if o, ok := v.Required(cm, at, "last_admitted_order"); ok {
			switch {
			case o.Kind == strictjson.Null:
				if lastOrder >= 0 {
					v.Add(at+".last_admitted_order", CodeInvalidValue, "transitions fired after observation %d was admitted", lastOrder)
				}
			default:
				if n, ok := v.Integer(o, at+".last_admitted_order", 0, 1<<40); ok {
					if n < lastOrder {
						v.Add(at+".last_admitted_order", CodeInvalidValue, "order %d is before observation %d, which a transition used", n, lastOrder)
					}
					if n >= v.j.Len() {
						v.Add(at+".last_admitted_order", CodeInvalidValue, "order %d is beyond the %d journal entries", n, v.j.Len())
					}
				}
			}
		}
		return true
	})
	if c, ok := m["controls"]; ok && c.Kind == strictjson.Array && outcome != "" && len(c.Elems) != want {
		v.Add(path+".controls", CodeInvalidValue, "a %s run has %d control(s), not %d", outcome, want, len(c.Elems))
	}
}

// ids checks a list of event ids, calling each with its capture order.
func (v *runVerifier) ids(m strictjson.Members, path, key string, each func(k, order int, id, at string), min int) {
	v.List(m, path, key, true, min, 1<<20, func(k int, e *strictjson.Node, at string) bool {
		s, ok := v.Str(e, at)
		if !ok {
			return false
		}
		o, found := v.j.Order(s)
		if !found {
			v.Add(at, CodeInvalidValue, "%q names no observation of the record's event_journal", strictjson.Truncate(s, 64))
			return false
		}
		each(k, o, s, at)
		return true
	})
}

func (v *runVerifier) count(m strictjson.Members) int {
	if t, ok := m["transitions"]; ok {
		return len(t.Elems)
	}
	return 0
}

func (v *runVerifier) enum(m strictjson.Members, path, key string, allowed ...string) (string, bool) {
	n, ok := v.Required(m, path, key)
	if !ok {
		return "", false
	}
	return v.Enum(n, path+"."+key, allowed...)
}

func (v *runVerifier) state(id string) *State {
	for i := range v.sc.States {
		if v.sc.States[i].ID == id {
			return &v.sc.States[i]
		}
	}
	return nil
}

func (v *runVerifier) transition(state, id string) *Transition {
	st := v.state(state)
	if st == nil {
		return nil
	}
	for i := range st.On {
		if st.On[i].ID == id {
			return &st.On[i]
		}
	}
	return nil
}
