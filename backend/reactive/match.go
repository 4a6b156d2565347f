package reactive

import (
	"bytes"
	"sort"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// exactField is one field an event trigger compares, with its decoded
// expected value.
type exactField struct {
	name  string
	value *strictjson.Node
}

// pos is a point in the observation stream: events after order and
// terminal text from byte offset text of the concatenated raw frames.
// The zero bound (before anything) is {-1, 0}.
type pos struct{ order, text int }

var origin = pos{-1, 0}

func maxPos(a, b pos) pos { return pos{max(a.order, b.order), max(a.text, b.text)} }

func before(a, b pos) bool { return a.order < b.order || a.order == b.order && a.text < b.text }

// match is one way a trigger is satisfied: where it ends, the observations
// it used and the text ends of consuming terminal_text leaves.
type match struct {
	end      pos
	ids      []string
	consumes []int
}

// cursorKey identifies an incremental leaf search: the leaf and the start
// of the search (text offset or order, by leaf kind).
type cursorKey struct{ leaf, from int }

// cursor is an incremental search of one leaf from one start. It only
// moves forward as observations are admitted, so each leaf costs linear
// time in the observations after its frontier, not quadratic.
type cursor struct {
	scan  int // next text offset or order to examine
	count int
	done  bool
	start int // text match start (terminal_text)
	end   int // text match end, or the matching order (event)
}

// eval reports whether t is satisfied by the observations admitted so far
// with every leaf starting after lb, and how.
func (r *Runner) eval(t *Trigger, lb pos) (match, bool) {
	switch t.Kind {
	case KindTerminalText:
		return r.evalText(t, lb)
	case KindEvent:
		return r.evalEvent(t, lb)
	case KindAll, KindSequence:
		var out match
		out.end = lb
		for _, c := range t.Of {
			from := lb
			if t.Kind == KindSequence { // each child after the previous one
				from = out.end
			}
			m, ok := r.eval(c, from)
			if !ok {
				return match{}, false
			}
			out.end = maxPos(out.end, m.end)
			out.ids = appendNew(out.ids, m.ids...)
			out.consumes = append(out.consumes, m.consumes...)
		}
		return out, true
	case KindAny:
		var best match
		found := false
		for _, c := range t.Of {
			if m, ok := r.eval(c, lb); ok && (!found || before(m.end, best.end)) {
				best, found = m, true
			}
		}
		return best, found
	case KindRepeat:
		var out match
		out.end = lb
		count := 0
		for count <= t.Max {
			m, ok := r.eval(t.Of[0], out.end)
			if !ok || !before(out.end, maxPos(out.end, m.end)) {
				break
			}
			count++
			out.end = maxPos(out.end, m.end)
			out.ids = appendNew(out.ids, m.ids...)
			out.consumes = append(out.consumes, m.consumes...)
		}
		return out, count >= t.Min && count <= t.Max
	}
	return match{}, false
}

// frontier is where a leaf's own since puts it (false when its checkpoint
// or event has not been observed yet).
func (r *Runner) frontier(f Frontier) (pos, bool) {
	switch f.Kind {
	case SinceScenarioStart:
		return origin, true
	case SinceStateEntry:
		return r.entry, true
	case SinceCheckpoint:
		o, ok := r.checkpoints[f.Name]
		if !ok {
			return pos{}, false
		}
		return pos{o, r.obs[o].textEnd}, true
	case SinceEventID:
		o, ok := r.events[f.ID]
		if !ok {
			return pos{}, false
		}
		return pos{o, r.obs[o].textEnd}, true
	}
	return pos{}, false
}

func (r *Runner) evalText(t *Trigger, lb pos) (match, bool) {
	f, ok := r.frontier(t.Since)
	if !ok {
		return match{}, false
	}
	from := max(lb.text, f.text, r.consumed)
	key := cursorKey{t.id, from}
	c := r.cursors[key]
	if c == nil {
		c = &cursor{scan: from}
		r.cursors[key] = c
	}
	v := []byte(t.Text)
	for !c.done {
		i := bytes.Index(r.text[c.scan:], v)
		if i < 0 {
			c.scan = max(c.scan, len(r.text)-len(v)+1)
			break
		}
		c.count++
		c.start, c.end = c.scan+i, c.scan+i+len(v)
		c.scan = c.end
		c.done = c.count == t.Occurrence
	}
	if !c.done {
		return match{}, false
	}
	first, last := r.frameAt(c.start), r.frameAt(c.end-1)
	m := match{end: maxPos(lb, pos{r.frames[last].order, c.end})}
	for k := first; k <= last; k++ {
		m.ids = append(m.ids, r.obs[r.frames[k].order].id)
	}
	if t.Consume {
		m.consumes = []int{c.end}
	}
	return m, true
}

// frameAt is the index in r.frames of the frame holding text offset off.
func (r *Runner) frameAt(off int) int {
	return sort.Search(len(r.frames), func(i int) bool { return r.frames[i].start > off }) - 1
}

func (r *Runner) evalEvent(t *Trigger, lb pos) (match, bool) {
	f, ok := r.frontier(t.Since)
	if !ok {
		return match{}, false
	}
	from := max(lb.order, f.order) + 1
	key := cursorKey{t.id, from}
	c := r.cursors[key]
	if c == nil {
		c = &cursor{scan: from}
		r.cursors[key] = c
	}
	for ; !c.done && c.scan < len(r.obs); c.scan++ {
		if o := &r.obs[c.scan]; o.source == t.Source && o.payload != nil && exactMatch(o.payload, t.exact) {
			c.count++
			if c.count == t.Occurrence {
				c.done, c.end = true, c.scan
			}
		}
	}
	if !c.done {
		return match{}, false
	}
	return match{end: maxPos(lb, pos{c.end, r.obs[c.end].textEnd}), ids: []string{r.obs[c.end].id}}, true
}

// exactMatch reports whether every field of want is a member of payload
// with a structurally equal value (numbers by value, objects regardless of
// member order).
func exactMatch(payload *strictjson.Node, want []exactField) bool {
	for _, f := range want {
		v, ok := payload.Member(f.name)
		if !ok || !strictjson.Equal(v, f.value) {
			return false
		}
	}
	return true
}

// appendNew appends the ids of add not yet in ids.
func appendNew(ids []string, add ...string) []string {
	for _, a := range add {
		dup := false
		for _, x := range ids {
			if x == a {
				dup = true
				break
			}
		}
		if !dup {
			ids = append(ids, a)
		}
	}
	return ids
}
