package compare

import (
	"slices"
	"strconv"
	"strings"
)

// Mode selects what a comparison asks (docs/formats/comparison.md).
type Mode string

// The comparison modes.
const (
	// ModeBehavior asks "did the program behave differently?": chunk
	// boundaries, times and sample counts are ignored (see Compare). It
	// is the default.
	ModeBehavior Mode = "behavior"
	// ModeExact asks "did the captures record the same observations?":
	// every item index by index, times included.
	ModeExact Mode = "exact"
)

// ParseMode returns the mode named s ("" is ModeBehavior), and false for
// any other name.
func ParseMode(s string) (Mode, bool) { return Mode(s).resolve() }

// resolve returns the mode m stands for ("" is ModeBehavior).
func (m Mode) resolve() (Mode, bool) {
	switch m {
	case "", ModeBehavior:
		return ModeBehavior, true
	case ModeExact:
		return ModeExact, true
	}
	return m, false
}

// equalSkipping is equalJSON for two objects whose top-level members in
// skip are ignored; other values compare with equalJSON.
func equalSkipping(a, b any, skip map[string]bool) bool {
	x, okX := a.(map[string]any)
	y, okY := b.(map[string]any)
	if !okX || !okY {
		return equalJSON(a, b)
	}
	n := 0
	for k, xv := range x {
		if skip[k] {
			continue
		}
		n++
		yv, ok := y[k]
		if !ok || !equalJSON(xv, yv) {
			return false
		}
	}
	for k := range y {
		if !skip[k] {
			n--
		}
	}
	return n == 0
}

// The members each behavior comparison ignores.
var (
	skipTimes       = map[string]bool{"sequence": true, "at_ms": true}
	skipInteraction = map[string]bool{"sequence": true, "scheduled_at_ms": true, "dispatched_at_ms": true}
	skipCheckpoint  = map[string]bool{"at_ms": true}
)

// timedList is the observations of collection name, each carrying its
// timeField as its time and ignoring skip in equality.
func (r *record) timedList(name, timeField string, skip map[string]bool) []obs {
	items := r.lists[name]
	out := make([]obs, len(items))
	for i, it := range items {
		m, _ := it.(map[string]any)
		at, ok := integer(m[timeField])
		out[i] = obs{value: it, at: at, hasAt: ok, kind: name, index: i, skip: skip}
	}
	return out
}

// behaviorDimensions builds every dimension's comparison list in behavior
// mode (docs/formats/comparison.md): the terminal as one stream and a final
// screen; interaction and shim lists without times, protocol events per
// connection (behavior_protocol.go); exit and
// settlement without elapsed_ms; checkpoints matched by name without
// at_ms, then the final state; processes as a set of command-line paths.
// Times are kept on the observations only to order the first divergence.
func behaviorDimensions(l, r *record) [numDims]dimObs {
	var out [numDims]dimObs
	out[dimTerminal] = behaviorTerminal(l, r)
	out[dimInteraction] = zip(l.timedList("interaction_events", "dispatched_at_ms", skipInteraction),
		r.timedList("interaction_events", "dispatched_at_ms", skipInteraction))
	out[dimExit] = zip([]obs{behaviorExit(l)}, []obs{behaviorExit(r)})
	out[dimFilesystem] = behaviorFilesystem(l, r)
	out[dimProtocol] = behaviorProtocol(l, r)
	out[dimProcess] = behaviorProcesses(l, r)
	out[dimShim] = zip(l.timedList("shim_events", "at_ms", skipTimes), r.timedList("shim_events", "at_ms", skipTimes))
	return out
}

// behaviorExit is {exit: {code, signal, reason}, settlement: {state,
// cleanup_outcome}}.
func behaviorExit(r *record) obs {
	pick := func(m map[string]any, keys ...string) map[string]any {
		out := make(map[string]any, len(keys))
		for _, k := range keys {
			out[k] = m[k]
		}
		return out
	}
	return obs{value: map[string]any{"exit": pick(r.exit, "code", "signal", "reason"),
		"settlement": pick(r.settlement, "state", "cleanup_outcome")}, kind: "exit", index: -1}
}

// behaviorFilesystem matches checkpoints by name (the n-th checkpoint of
// a name with the other side's n-th of that name), comparing files and
// effects, in the order of their earlier position on either side (so the
// order does not depend on which side is left); the final state
// {files_after, filesystem_effects} comes last.
func behaviorFilesystem(l, r *record) dimObs {
	lc := l.timedList("filesystem_checkpoints", "at_ms", skipCheckpoint)
	rc := r.timedList("filesystem_checkpoints", "at_ms", skipCheckpoint)
	key := func(list []obs) []string {
		seen := map[string]int{}
		keys := make([]string, len(list))
		for i, o := range list {
			m, _ := o.value.(map[string]any)
			name, _ := m["name"].(string)
			seen[name]++
			keys[i] = name + "\x00" + strconv.Itoa(seen[name])
		}
		return keys
	}
	lk, rk := key(lc), key(rc)
	rIndex := make(map[string]int, len(rk))
	for i, k := range rk {
		rIndex[k] = i
	}
	d := dimObs{n: [2]int{len(lc), len(rc)}}
	type slot struct {
		pos int // min(left index, right index): the same whichever side is left
		key string
		p   obsPair
	}
	slots := make([]slot, 0, len(lc)+len(rc))
	matched := make([]bool, len(rc))
	for i, k := range lk {
		s := slot{pos: i, key: k, p: obsPair{l: &lc[i]}}
		if j, ok := rIndex[k]; ok {
			s.pos, s.p.r, matched[j] = min(i, j), &rc[j], true
		}
		slots = append(slots, s)
	}
	for j, k := range rk {
		if !matched[j] {
			slots = append(slots, slot{pos: j, key: k, p: obsPair{r: &rc[j]}})
		}
	}
	slices.SortStableFunc(slots, func(a, b slot) int {
		if a.pos != b.pos {
			return a.pos - b.pos
		}
		return strings.Compare(a.key, b.key)
	})
	for _, s := range slots {
		d.pairs = append(d.pairs, s.p)
	}
	final := func(rec *record, cps []obs) *obs {
		if len(rec.filesAfter) == 0 && len(rec.effects) == 0 {
			return nil
		}
		o := &obs{value: map[string]any{"files_after": rec.filesAfter, "filesystem_effects": rec.effects}, kind: "final", index: -1}
		if n := len(cps); n > 0 {
			o.at, o.hasAt = cps[n-1].at, cps[n-1].hasAt
		}
		return o
	}
	lf, rf := final(l, lc), final(r, rc)
	if lf != nil || rf != nil {
		d.pairs = append(d.pairs, obsPair{l: lf, r: rf})
		if lf != nil {
			d.n[0]++
		}
		if rf != nil {
			d.n[1]++
		}
	}
	return d
}

// procNode is one distinct process of a behavior comparison: the command
// lines from the tree's root down to it.
type procNode struct {
	path []string
	o    obs
}

// processNodes reduces r's process samples to the distinct command-line
// paths of its process tree, sorted (parents before children). A process
// is identified by its pid within the record; its command is the last one
// sampled, except that samples showing its parent's command line while it
// was also seen with another (a child between fork and exec) are ignored.
// A process whose parent was never sampled is a root. A process whose
// command line is its parent's (forked, not exec'd: a subshell, one side
// of a pipeline) is no distinct command line and folds into its parent,
// so a short-lived fork seen in one run only is not a difference.
func processNodes(r *record) []procNode {
	type proc struct {
		parent  int64
		cmds    []string
		first   int // sample index of the first sighting
		firstAt int64
	}
	procs := map[int64]*proc{}
	var order []int64
	for i, it := range r.lists["process_samples"] {
		m, _ := it.(map[string]any)
		pid, _ := integer(m["pid"])
		ppid, _ := integer(m["parent_pid"])
		cmd, _ := m["command"].(string)
		at, _ := integer(m["at_ms"])
		p := procs[pid]
		if p == nil {
			p = &proc{parent: ppid, first: i, firstAt: at}
			procs[pid] = p
			order = append(order, pid)
		}
		p.parent = ppid
		if n := len(p.cmds); n == 0 || p.cmds[n-1] != cmd {
			p.cmds = append(p.cmds, cmd)
		}
	}
	command := func(pid int64) string {
		p := procs[pid]
		parentCmd := ""
		if pp := procs[p.parent]; pp != nil && p.parent != pid {
			parentCmd = pp.cmds[len(pp.cmds)-1]
		}
		for i := len(p.cmds) - 1; i >= 0; i-- {
			if p.cmds[i] != parentCmd || i == 0 {
				return p.cmds[i]
			}
		}
		return p.cmds[0]
	}
	cmds := make(map[int64]string, len(procs))
	for _, pid := range order {
		cmds[pid] = command(pid)
	}
	nodes := make([]procNode, 0, len(order))
	seen := map[string]bool{}
	for _, pid := range order {
		var path []string
		guard := map[int64]bool{}
		for cur := pid; procs[cur] != nil && !guard[cur]; cur = procs[cur].parent {
			guard[cur] = true // a parent cycle ends the path
			path = append(path, cmds[cur])
		}
		slices.Reverse(path)
		// A child that forked without exec (a subshell, one side of a
		// pipeline) shows its parent's command line: it is no distinct
		// command line, so it folds into its parent.
		path = slices.Compact(path)
		k := canonKey(anyStrings(path), nil)
		if seen[k] {
			continue
		}
		seen[k] = true
		p := procs[pid]
		parents := anyStrings(path[:len(path)-1])
		nodes = append(nodes, procNode{path: path, o: obs{
			value: map[string]any{"command": path[len(path)-1], "parent_commands": parents},
			at:    p.firstAt, hasAt: true, kind: "process_samples", index: p.first}})
	}
	slices.SortFunc(nodes, func(a, b procNode) int { return slices.Compare(a.path, b.path) })
	return nodes
}

func anyStrings(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// behaviorProcesses compares the two sides' sets of process paths: a
// path on one side only is a differing position. A path on one side only
// next (in sorted order) to one on the other side only with the same
// parents is one position: the child whose command line changed.
func behaviorProcesses(l, r *record) dimObs {
	ln, rn := processNodes(l), processNodes(r)
	d := dimObs{n: [2]int{len(ln), len(rn)}}
	i, j := 0, 0
	for i < len(ln) || j < len(rn) {
		c := 0
		switch {
		case i == len(ln):
			c = 1
		case j == len(rn):
			c = -1
		default:
			c = slices.Compare(ln[i].path, rn[j].path)
		}
		switch {
		case c == 0:
			d.pairs = append(d.pairs, obsPair{l: &ln[i].o, r: &rn[j].o})
			i++
			j++
		case c < 0:
			d.pairs = append(d.pairs, obsPair{l: &ln[i].o})
			i++
		default:
			d.pairs = append(d.pairs, obsPair{r: &rn[j].o})
			j++
		}
	}
	out := d.pairs[:0]
	for k := 0; k < len(d.pairs); k++ {
		p := d.pairs[k]
		if k+1 < len(d.pairs) {
			q := d.pairs[k+1]
			lonely := func(x obsPair) *obs {
				if x.l != nil && x.r == nil {
					return x.l
				}
				if x.r != nil && x.l == nil {
					return x.r
				}
				return nil
			}
			a, b := lonely(p), lonely(q)
			if a != nil && b != nil && (p.l == nil) != (q.l == nil) && sameParents(a, b) {
				if p.l == nil {
					p.l = q.l
				} else {
					p.r = q.r
				}
				k++
			}
		}
		out = append(out, p)
	}
	d.pairs = out
	return d
}

func sameParents(a, b *obs) bool {
	x, _ := a.value.(map[string]any)
	y, _ := b.value.(map[string]any)
	return equalJSON(x["parent_commands"], y["parent_commands"])
}
