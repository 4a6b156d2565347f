package replay

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// graph checks the rules that span the machine: unique names and ids,
// known states, terminal states, ambiguity, sensitivity of variables,
// reachability and that every guard variable is captured on every path
// before it is used.
func (c *checker) graph(m *Machine, path string) {
	tpath := func(i int) string { return fmt.Sprintf("%s.transitions[%d]", path, i) }
	refsOK := true
	stateIdx := make(map[string]int, len(m.States))
	terminal := false
	for i, s := range m.States {
		terminal = terminal || s.Terminal
		if first, dup := stateIdx[s.Name]; dup {
			c.Add(fmt.Sprintf("%s.states[%d].name", path, i), CodeDuplicateEntry, "state %s is already declared by states[%d]", s.Name, first)
			refsOK = false
			continue
		}
		stateIdx[s.Name] = i
	}
	if !terminal {
		c.Add(path+".states", CodeNoTerminalState, "at least one state must be terminal")
	}
	start, ok := stateIdx[m.InitialState]
	if !ok {
		c.Add(path+".initial_state", CodeUnknownState, "no state is named %s", m.InitialState)
		refsOK = false
	}
	ids := make(map[string]int, len(m.Transitions))
	ambiguity := make(map[string]int, len(m.Transitions))
	from := make([]int, len(m.Transitions))
	to := make([]int, len(m.Transitions))
	for i, t := range m.Transitions {
		if first, dup := ids[t.ID]; dup {
			c.Add(tpath(i)+".id", CodeDuplicateEntry, "transition id %s is already used by transitions[%d]", t.ID, first)
		} else {
			ids[t.ID] = i
		}
		var ok bool
		if from[i], ok = stateIdx[t.From]; !ok {
			c.Add(tpath(i)+".from", CodeUnknownState, "no state is named %s", t.From)
			refsOK = false
		} else if m.States[from[i]].Terminal {
			c.Add(tpath(i)+".from", CodeTerminalHasTransitions, "state %s is terminal and cannot have outgoing transitions", t.From)
		}
		if to[i], ok = stateIdx[t.To]; !ok {
			c.Add(tpath(i)+".to", CodeUnknownState, "no state is named %s", t.To)
			refsOK = false
		}
		trig, _ := json.Marshal(t.Trigger) // header maps marshal in sorted order
		key := t.From + "\x00" + strconv.Itoa(t.Priority) + "\x00" + string(trig)
		if first, dup := ambiguity[key]; dup {
			c.Add(tpath(i), CodeAmbiguousTransition, "transitions[%d] already has the same from state, priority and trigger; give one a different priority or trigger", first)
		} else {
			ambiguity[key] = i
		}
	}

	// Variables: one index each, and one sensitivity.
	varIdx := map[string]int{}
	sensitive := map[string]bool{}
	for i, t := range m.Transitions {
		for k, cp := range t.Captures {
			if prev, seen := sensitive[cp.Variable]; seen {
				if prev != cp.Sensitive {
					c.Add(fmt.Sprintf("%s.captures[%d].sensitive", tpath(i), k), CodeInconsistentSensitivity, "variable %s is captured elsewhere with sensitive %t", cp.Variable, prev)
				}
				continue
			}
			sensitive[cp.Variable] = cp.Sensitive
			varIdx[cp.Variable] = len(varIdx)
		}
	}
	for i, t := range m.Transitions {
		for k, g := range t.Guards {
			if g.Value.Source != SourceRequestHeader || !credentialHeaders[g.Value.Name] {
				continue
			}
			if s, seen := sensitive[g.Variable]; seen && !s {
				c.Add(fmt.Sprintf("%s.guards[%d].variable", tpath(i), k), CodeCredentialNotSensitive, "the credential header %q may only be compared with a sensitive variable; %s is not sensitive", g.Value.Name, g.Variable)
			}
		}
	}
	if !refsOK {
		return
	}

	// Forward must-analysis over the state graph. must[s] holds the
	// variables captured on every path from the initial state to s; it
	// only shrinks, so the worklist reaches the fixpoint. A state is
	// reachable exactly when it gets a set (reached).
	words := (len(varIdx) + 63) / 64
	caps := make([][]uint64, len(m.Transitions))
	for i, t := range m.Transitions {
		caps[i] = make([]uint64, words)
		for _, cp := range t.Captures {
			n := varIdx[cp.Variable]
			caps[i][n/64] |= 1 << (n % 64)
		}
	}
	out := make([][]int, len(m.States))
	for i := range m.Transitions {
		out[from[i]] = append(out[from[i]], i)
	}
	must := make([][]uint64, len(m.States))
	reached := make([]bool, len(m.States))
	must[start] = make([]uint64, words)
	reached[start] = true
	queue := []int{start}
	queued := make([]bool, len(m.States))
	queued[start] = true
	scratch := make([]uint64, words)
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		queued[s] = false
		for _, i := range out[s] {
			d := to[i]
			if d == start {
				continue // the empty path captures nothing
			}
			for w := range scratch {
				scratch[w] = must[s][w] | caps[i][w]
			}
			changed := false
			if !reached[d] {
				reached[d] = true
				must[d] = append(make([]uint64, 0, words), scratch...)
				changed = true
			} else {
				for w := range scratch {
					if n := must[d][w] & scratch[w]; n != must[d][w] {
						must[d][w] = n
						changed = true
					}
				}
			}
			if changed && !queued[d] {
				queued[d] = true
				queue = append(queue, d)
			}
		}
	}
	for i, s := range m.States {
		if !reached[i] {
			c.Add(fmt.Sprintf("%s.states[%d]", path, i), CodeUnreachableState, "state %s cannot be reached from the initial state %s", s.Name, m.InitialState)
		}
	}
	for i, t := range m.Transitions {
		if !reached[from[i]] {
			continue // reported as unreachable
		}
		set := must[from[i]]
		for k, g := range t.Guards {
			at := fmt.Sprintf("%s.guards[%d].variable", tpath(i), k)
			n, captured := varIdx[g.Variable]
			switch {
			case !captured:
				c.Add(at, CodeUncapturedVariable, "variable %s is never captured", g.Variable)
			case set[n/64]&(1<<(n%64)) == 0:
				c.Add(at, CodeUncapturedVariable, "variable %s is not captured on every path from %s to %s before this guard uses it", g.Variable, m.InitialState, t.From)
			}
		}
	}
}
