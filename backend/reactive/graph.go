package reactive

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// graph checks the rules that span the scenario (see Check).
func (p *parser) graph(sc *Scenario, path string, ctx Context) {
	spath := func(i int) string { return fmt.Sprintf("%s.states[%d]", path, i) }
	tpath := func(i, j int) string { return fmt.Sprintf("%s.states[%d].on[%d]", path, i, j) }
	if ctx.TimeoutMS > 0 && sc.DeadlineMS > ctx.TimeoutMS {
		p.Add(path+".deadline_ms", CodeDeadlineOrder, "deadline_ms %d is after the capture's timeout_ms %d", sc.DeadlineMS, ctx.TimeoutMS)
	}
	index := map[string]int{}
	for i, st := range sc.States {
		if first, dup := index[st.ID]; dup {
			p.Add(spath(i)+".id", CodeDuplicateEntry, "state %s is already declared by states[%d]", st.ID, first)
			continue
		}
		index[st.ID] = i
		if st.DeadlineMS > sc.DeadlineMS {
			p.Add(spath(i)+".deadline_ms", CodeDeadlineOrder, "deadline_ms %d is after the scenario's deadline_ms %d", st.DeadlineMS, sc.DeadlineMS)
		}
	}
	start, ok := index[sc.InitialState]
	if !ok {
		p.Add(path+".initial_state", CodeUnknownState, "no state is named %s", sc.InitialState)
	}

	// Ids, targets, ambiguity, checkpoint actions.
	ids := map[string]string{}
	checkpoints := map[string]string{}
	dispatched := 0
	for i, st := range sc.States {
		seen := map[string]int{}
		for j, t := range st.On {
			at := tpath(i, j)
			if first, dup := ids[t.ID]; dup {
				p.Add(at+".id", CodeDuplicateEntry, "transition id %s is already used by %s", t.ID, first)
			} else {
				ids[t.ID] = at
			}
			if t.Target.Kind == TargetGoto {
				if _, known := index[t.Target.State]; !known {
					p.Add(at+".target.state", CodeUnknownState, "no state is named %s", t.Target.State)
					ok = false
				}
			}
			trig, _ := json.Marshal(t.When)
			key := strconv.Itoa(t.Priority) + "\x00" + string(trig)
			if first, dup := seen[key]; dup {
				p.Add(at, CodeAmbiguousTransition, "on[%d] of this state already has priority %d and the same trigger", first, t.Priority)
			} else {
				seen[key] = j
			}
			for k, a := range t.Actions {
				if a.Dispatched() {
					dispatched += t.MaxUses
					continue
				}
				apath := fmt.Sprintf("%s.actions[%d].name", at, k)
				switch first, dup := checkpoints[a.Name]; {
				case dup:
					p.Add(apath, CodeDuplicateEntry, "checkpoint %s is already taken by %s", a.Name, first)
				case slices.Contains(ctx.Checkpoints, a.Name):
					p.Add(apath, CodeDuplicateEntry, "checkpoint %s is already a checkpoint of the capture scenario", a.Name)
				default:
					checkpoints[a.Name] = apath
				}
				if t.MaxUses != 1 {
					p.Add(apath, CodeCheckpointReuse, "a checkpoint is taken once: its transition must have max_uses 1, not %d", t.MaxUses)
				}
			}
		}
	}
	if dispatched > MaxDispatchedAction {
		p.Add(path+".states", CodeTooManyActions, "the graph may dispatch %d actions (max_uses times dispatched actions); at most %d are allowed", dispatched, MaxDispatchedAction)
	}
	// Checkpoint frontiers name a checkpoint that can exist.
	for i, st := range sc.States {
		for j, t := range st.On {
			walk(t.When, tpath(i, j)+".when", func(tr *Trigger, at string) {
				if tr.Since.Kind != SinceCheckpoint {
					return
				}
				n := tr.Since.Name
				if n != checkpointBefore && !slices.Contains(ctx.Checkpoints, n) && checkpoints[n] == "" {
					p.Add(at+".since.name", CodeUnknownCheckpoint, "no checkpoint is named %s (before, the capture scenario's checkpoints and checkpoint actions are)", n)
				}
			})
		}
	}
	if !ok {
		return
	}

	// Reachability from the initial state, and co-reachability of a
	// finish transition (a backward fixpoint over the same edges).
	succ := make([][]int, len(sc.States))
	finishes := make([]bool, len(sc.States))
	for i, st := range sc.States {
		for _, t := range st.On {
			if t.Target.Kind == TargetGoto {
				succ[i] = append(succ[i], index[t.Target.State])
			} else {
				finishes[i] = true
			}
		}
	}
	reached := make([]bool, len(sc.States))
	reached[start] = true
	queue := []int{start}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, d := range succ[s] {
			if !reached[d] {
				reached[d] = true
				queue = append(queue, d)
			}
		}
	}
	live := slices.Clone(finishes)
	for changed := true; changed; {
		changed = false
		for i := range sc.States {
			if live[i] {
				continue
			}
			for _, d := range succ[i] {
				if live[d] {
					live[i], changed = true, true
					break
				}
			}
		}
	}
	for i, st := range sc.States {
		switch {
		case !reached[i]:
			p.Add(spath(i), CodeUnreachableState, "state %s cannot be reached from the initial state %s", st.ID, sc.InitialState)
		case !live[i]:
			p.Add(spath(i), CodeDeadEnd, "no path from state %s reaches a finish transition", st.ID)
		}
	}
}

// walk calls f for t and every trigger below it with its path.
func walk(t *Trigger, at string, f func(*Trigger, string)) {
	if t == nil {
		return
	}
	f(t, at)
	if t.Kind == KindRepeat {
		if len(t.Of) == 1 {
			walk(t.Of[0], at+".of", f)
		}
		return
	}
	for i, c := range t.Of {
		walk(c, fmt.Sprintf("%s.of[%d]", at, i), f)
	}
}
