package compare

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The behavior-mode terminal comparison (docs/formats/comparison.md): the
// concatenated raw stream of each side (its frames' data, already
// normalized by the capture) and the final rendered screen. Chunk
// boundaries and times are ignored. Screens are read from the capture's
// own rendered frames; this package runs no terminal emulator.

// joinFrames concatenates the frames' data and returns the start offset
// of each frame in it.
func joinFrames(frames []any) (string, []int) {
	var b strings.Builder
	starts := make([]int, len(frames))
	for i, f := range frames {
		m, _ := f.(map[string]any)
		s, _ := m["data"].(string)
		starts[i] = b.Len()
		b.WriteString(s)
	}
	return b.String(), starts
}

// chunkAt is the index of the frame holding byte p (the last frame when p
// is the stream's end), or -1 without frames.
func chunkAt(starts []int, p int) int {
	return sort.Search(len(starts), func(i int) bool { return starts[i] > p }) - 1
}

// screenAfter is the index of the rendered frame recorded after frame i
// was parsed: the next rendered frame in the event journal, or, without a
// journal, the first one not earlier than the frame (the last one when
// none is). -1 when there is none.
func screenAfter(r *record, i int) int {
	rendered := r.lists["rendered_frames"]
	if len(rendered) == 0 || i < 0 {
		return len(rendered) - 1
	}
	if len(r.journal) > 0 {
		found := false
		for _, e := range r.journal {
			switch {
			case !found && e.collection == "frames" && e.index == i:
				found = true
			case found && e.collection == "rendered_frames":
				return e.index
			}
		}
		return len(rendered) - 1
	}
	fm, _ := r.lists["frames"][i].(map[string]any)
	at, _ := integer(fm["at_ms"])
	for j, it := range rendered {
		m, _ := it.(map[string]any)
		if t, _ := integer(m["at_ms"]); t >= at {
			return j
		}
	}
	return len(rendered) - 1
}

// screenLines returns the lines of rendered frame j of r (nil for -1).
func screenLines(r *record, j int) []any {
	if j < 0 {
		return nil
	}
	m, _ := r.lists["rendered_frames"][j].(map[string]any)
	lines, _ := m["lines"].([]any)
	return lines
}

// rowDiff is one differing row of a screen pair, as each side shows it.
type rowDiff struct {
	row         int
	left, right *string
	lr, rr      [][2]int
}

// diffRows compares two screens row by row (every differing row: a
// screen has at most the capture's 1,000 rows). A row's text is shown without its trailing padding unless
// the rows differ only in it.
func diffRows(a, b []any, budget *int) []rowDiff {
	var out []rowDiff
	for row := range max(len(a), len(b)) {
		var la, lb *string
		if row < len(a) {
			s, _ := a[row].(string)
			la = &s
		}
		if row < len(b) {
			s, _ := b[row].(string)
			lb = &s
		}
		if la != nil && lb != nil && *la == *lb {
			continue
		}
		d := rowDiff{row: row}
		ta, tb := trimPad(la), trimPad(lb)
		if ta != nil && tb != nil && *ta == *tb {
			ta, tb = la, lb
		}
		d.left, d.right = ta, tb
		switch {
		case ta != nil && tb != nil:
			d.lr, d.rr = charRangesWithin(*ta, *tb, budget)
		case ta != nil:
			d.lr = [][2]int{{0, utf8.RuneCountInString(*ta)}}
		default:
			d.rr = [][2]int{{0, utf8.RuneCountInString(*tb)}}
		}
		out = append(out, d)
	}
	return out
}

func trimPad(s *string) *string {
	if s == nil {
		return nil
	}
	t := strings.TrimRight(*s, " ")
	return &t
}

// rowValue is one side of a differing row: {row, text, ranges}, ranges
// the differing character ranges [start, end) counted in code points.
func rowValue(row int, text string, ranges [][2]int) map[string]any {
	rs := make([]any, len(ranges))
	for i, r := range ranges {
		rs[i] = []any{jsonInt(r[0]), jsonInt(r[1])}
	}
	return map[string]any{"row": jsonInt(row), "text": text, "ranges": rs}
}

// sideRows is one side's rows of a diffRows result (rows it lacks are
// left out).
func sideRows(diffs []rowDiff, left bool) []any {
	out := []any{}
	for _, d := range diffs {
		text, ranges := d.left, d.lr
		if !left {
			text, ranges = d.right, d.rr
		}
		if text != nil {
			out = append(out, rowValue(d.row, *text, ranges))
		}
	}
	return out
}

// behaviorTerminal compares the two sides' streams and final screens.
// Its positions are, when the streams differ, the first differing byte
// (offset, the frame holding it, and the differing rows of the screen
// rendered after that frame on each side), then the final screen's
// geometry and cursor when they differ, then each differing final row.
func behaviorTerminal(l, r *record) dimObs {
	lf, rf := l.lists["frames"], r.lists["frames"]
	d := dimObs{n: [2]int{len(lf) + len(l.lists["rendered_frames"]), len(rf) + len(r.lists["rendered_frames"])}}
	ls, lstarts := joinFrames(lf)
	rs, rstarts := joinFrames(rf)
	budget := lcsBudget
	if ls != rs {
		p := 0
		for p < len(ls) && p < len(rs) && ls[p] == rs[p] {
			p++
		}
		li, ri := chunkAt(lstarts, p), chunkAt(rstarts, p)
		lj, rj := screenAfter(l, li), screenAfter(r, ri)
		rows := diffRows(screenLines(l, lj), screenLines(r, rj), &budget)
		d.pairs = append(d.pairs, obsPair{differ: true,
			l: streamObs(l, ls, lstarts, li, p, lj, sideRows(rows, true)),
			r: streamObs(r, rs, rstarts, ri, p, rj, sideRows(rows, false))})
	}
	return appendFinalScreen(d, l, r, &budget)
}

// streamObs is one side of a stream difference at byte p (nil when the
// side has no frame).
func streamObs(r *record, stream string, starts []int, i, p, j int, rows []any) *obs {
	if i < 0 {
		return nil
	}
	m, _ := r.lists["frames"][i].(map[string]any)
	at, hasAt := integer(m["at_ms"])
	screen := any(nil)
	if j >= 0 {
		screen = jsonInt(j)
	}
	v := map[string]any{
		"offset": jsonInt(p), "frame": jsonInt(i), "frame_offset": jsonInt(starts[i]),
		"data": m["data"], "at_end": p >= len(stream), "rendered_frame": screen, "rows": rows,
	}
	return &obs{value: v, at: at, hasAt: hasAt, kind: "frames", index: i}
}

// screenGeometry is the final screen's size, cursor and buffer.
var screenGeometry = []string{"columns", "rows", "cursor_x", "cursor_y", "active_buffer"}

// appendFinalScreen adds the final screens' differences to d.
func appendFinalScreen(d dimObs, l, r *record, budget *int) dimObs {
	last := func(rec *record) (int, map[string]any) {
		rf := rec.lists["rendered_frames"]
		if len(rf) == 0 {
			return -1, nil
		}
		m, _ := rf[len(rf)-1].(map[string]any)
		return len(rf) - 1, m
	}
	lk, lm := last(l)
	rk, rm := last(r)
	if lm == nil && rm == nil {
		return d
	}
	at := func(m map[string]any) (int64, bool) { return integer(m["at_ms"]) }
	geo := func(k int, m map[string]any) *obs {
		if m == nil {
			return nil
		}
		v := make(map[string]any, len(screenGeometry)+1)
		for _, g := range screenGeometry {
			v[g] = m[g]
		}
		v["final_screen"] = true
		t, ok := at(m)
		return &obs{value: v, at: t, hasAt: ok, kind: "rendered_frames", index: k}
	}
	lg, rg := geo(lk, lm), geo(rk, rm)
	if lg == nil || rg == nil || !equalJSON(lg.value, rg.value) {
		d.pairs = append(d.pairs, obsPair{l: lg, r: rg, differ: true})
	}
	lines := func(m map[string]any) []any {
		a, _ := m["lines"].([]any)
		return a
	}
	for _, rd := range diffRows(lines(lm), lines(rm), budget) {
		p := obsPair{differ: true}
		if rd.left != nil {
			t, ok := at(lm)
			p.l = &obs{value: rowValue(rd.row, *rd.left, rd.lr), at: t, hasAt: ok, kind: "rendered_frames", index: lk,
				loc: indexPath(indexPath(root+".rendered_frames", lk)+".lines", rd.row)}
		}
		if rd.right != nil {
			t, ok := at(rm)
			p.r = &obs{value: rowValue(rd.row, *rd.right, rd.rr), at: t, hasAt: ok, kind: "rendered_frames", index: rk,
				loc: indexPath(indexPath(root+".rendered_frames", rk)+".lines", rd.row)}
		}
		d.pairs = append(d.pairs, p)
	}
	return d
}

func jsonInt(n int) any { return json.Number(strconv.Itoa(n)) }
