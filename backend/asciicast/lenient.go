package asciicast

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// Import reads files as leniently as asciinema's own reader and player
// do, and says so: every tolerance that applied to a file becomes one of
// the recording's limitations (tolerances.limitations). What asciinema's
// reader also refuses (a bad resize, an exit status that is not one, a
// time going back in v2, broken JSON) is still refused.

const (
	utf8BOM = "\ufeff"
	// defaultColumns and defaultRows replace a width or height of 0, as
	// asciinema-player does.
	defaultColumns = 80
	defaultRows    = 24
	// maxToleratedNames bounds the names a tolerance lists.
	maxToleratedNames = 8
)

// The tolerances, as the limitation text that reports each.
const (
	tolBOM         = "the file starts with a UTF-8 byte order mark, which was skipped"
	tolV2Comment   = "comment lines (#) in an asciicast v2 file were ignored, as asciinema-player ignores them"
	tolV2Exit      = `an exit ("x") event in an asciicast v2 file was kept as the exit status`
	tolIdleZero    = "idle_time_limit 0 was read as no idle time limit"
	tolSizeZero    = "a terminal width or height of 0 was read as asciinema-player reads it: 80 columns, 24 rows"
	tolTimeDecimal = "the header timestamp has a fraction of a second, which was dropped"
	tolV1          = "asciicast v1 (a JSON document): its stdout frames were read as output events with the delays summed"
)

// tolerances is an ordered set of applied tolerances; the ones naming
// things (unknown keys, event codes, null env values) collect names.
type tolerances struct {
	fixed []string
	named []namedTolerance
}

type namedTolerance struct {
	what  string
	names []string
	more  int
}

func (t *tolerances) add(what string) {
	if !slices.Contains(t.fixed, what) {
		t.fixed = append(t.fixed, what)
	}
}

// addName records name under the tolerance what (at most
// maxToleratedNames names are listed, then a count).
func (t *tolerances) addName(what, name string) {
	i := slices.IndexFunc(t.named, func(n namedTolerance) bool { return n.what == what })
	if i < 0 {
		t.named = append(t.named, namedTolerance{what: what})
		i = len(t.named) - 1
	}
	n := &t.named[i]
	switch {
	case slices.Contains(n.names, name):
	case len(n.names) < maxToleratedNames:
		n.names = append(n.names, name)
	default:
		n.more++
	}
}

func (t *tolerances) addUnknownCode(code string) {
	t.addName("events with codes asciicast does not define were ignored, as asciinema-player ignores them", code)
}

// limitations returns one limitation per tolerance. Names are quoted
// (strconv.Quote, shortened), so no control character of the file
// reaches the text.
func (t *tolerances) limitations() []string {
	var out []string
	for _, f := range t.fixed {
		out = append(out, "Read leniently, as asciinema reads it: "+f+".")
	}
	for _, n := range t.named {
		q := make([]string, len(n.names))
		for i, s := range n.names {
			q[i] = strconv.Quote(strictjson.Truncate(s, 40))
		}
		list := strings.Join(q, ", ")
		if n.more > 0 {
			list += fmt.Sprintf(" and %d more", n.more)
		}
		out = append(out, "Read leniently, as asciinema reads it: "+n.what+": "+list+".")
	}
	return out
}

// members returns the members of object n at path that are among known;
// the others are ignored, as asciinema's reader ignores them, and listed.
func (c *cast) members(ck *strictjson.Checker, n *strictjson.Node, path string, known ...string) strictjson.Members {
	if n.Kind != strictjson.Object {
		ck.Add(path, CodeWrongType, "must be an object, not %s", n.Kind)
		return nil
	}
	m := strictjson.Members{}
	for i, k := range n.Keys {
		if !slices.Contains(known, k) {
			c.tolerated.addName("header keys asciicast does not define were ignored", strings.TrimPrefix(strings.TrimPrefix(path, "$")+"."+k, "."))
			continue
		}
		if _, dup := m[k]; !dup {
			m[k] = n.Vals[i]
		}
	}
	return m
}

// dimension reads a required terminal size field; 0 becomes def.
func (c *cast) dimension(ck *strictjson.Checker, m strictjson.Members, path, key string, def int) int {
	v, ok := ck.ReqInt(m, path, key, 0, MaxTerminalSize)
	if ok && v == 0 {
		c.tolerated.add(tolSizeZero)
		return def
	}
	return v
}

// unixTime reads the header timestamp: whole seconds up to the year 2514;
// a fraction is dropped.
func (c *cast) unixTime(ck *strictjson.Checker, n *strictjson.Node, path string) *int64 {
	f, ok := number(ck, n, path, 0)
	if !ok {
		return nil
	}
	if f > math.MaxInt32*4 {
		ck.Add(path, CodeInvalidValue, "%s is past the year 2514", strictjson.Truncate(n.Str, 40))
		return nil
	}
	if f != math.Trunc(f) {
		c.tolerated.add(tolTimeDecimal)
	}
	v := int64(f)
	return &v
}

// env checks the header's env: string values; null values are treated as
// absent, as asciinema's reader does.
func (c *cast) env(ck *strictjson.Checker, e *strictjson.Node, path string) {
	if e.Kind != strictjson.Object {
		ck.Add(path, CodeWrongType, "must be an object, not %s", e.Kind)
		return
	}
	for i, k := range e.Keys {
		if e.Vals[i].Kind == strictjson.Null {
			c.tolerated.addName("env values that were null were treated as absent", k)
			continue
		}
		str(ck, e.Vals[i], path+strictjson.KeyPath(k))
	}
}

// v1Options decode a whole asciicast v1 document: three values per frame.
var v1Options = func() strictjson.Options {
	o := decodeOptions
	o.MaxValues = 3*MaxEvents + 10_000
	o.Wording.EOF = "the document ends inside a JSON value"
	o.Wording.Trailing = "unexpected data after the JSON document at byte offset %d"
	return o
}()

var v1Fields = []string{"version", "width", "height", "duration", "command", "title", "env", "stdout"}

// v1Document reports whether data is an asciicast v1 file (a JSON
// document whose version is 1; its first line alone is not a v2 or v3
// header) and returns it decoded. A file it is not sure of is left to the
// line reader, which reports its problems.
func v1Document(data []byte) (*strictjson.Node, bool) {
	first, _, _ := bytes.Cut(data, []byte{'\n'})
	if n := strictjson.Decode(first, "$", decodeOptions, &strictjson.Collector{Max: 1}); n != nil && n.Kind == strictjson.Object {
		if v, ok := n.Member("version"); !ok || v.Str != "1" {
			return nil, false // a v2/v3 header line (or one the line reader refuses)
		}
	}
	t := bytes.TrimSpace(data)
	if len(t) == 0 || t[0] != '{' {
		return nil, false
	}
	col := &strictjson.Collector{Max: 1}
	n := strictjson.Decode(t, "$", v1Options, col)
	if n == nil || !col.Empty() || n.Kind != strictjson.Object {
		return nil, false
	}
	if v, ok := n.Member("version"); !ok || v.Str != "1" {
		return nil, false
	}
	return n, true
}

// v1 reads an asciicast v1 document: its header fields and its stdout
// frames [delay, data], delays in seconds since the previous frame.
// Problems are reported with line 0 and their JSON path.
func (c *cast) v1(doc *strictjson.Node, l *issues) (*cast, []Issue) {
	col := &strictjson.Collector{Max: MaxIssues}
	ck := &strictjson.Checker{Issues: col}
	c.version = 1
	c.tolerated.add(tolV1)
	m := c.members(ck, doc, "$", v1Fields...)
	c.size.Columns = c.dimension(ck, m, "$", "width", defaultColumns)
	c.size.Rows = c.dimension(ck, m, "$", "height", defaultRows)
	if d := present(m, "duration"); d != nil {
		number(ck, d, "$.duration", 0)
	}
	c.command = optString(ck, m, "$", "command")
	c.title = optString(ck, m, "$", "title")
	if e := present(m, "env"); e != nil {
		c.env(ck, e, "$.env")
		if t, ok := e.Member("TERM"); ok && t.Kind == strictjson.String {
			term := t.Str
			c.termType = &term
		}
	}
	frames, ok := ck.Required(m, "$", "stdout")
	if ok && frames.Kind != strictjson.Array {
		ck.Add("$.stdout", CodeWrongType, "must be an array of [delay, data] frames, not %s", frames.Kind)
		ok = false
	}
	if ok && len(frames.Elems) > MaxEvents {
		ck.Add("$.stdout", CodeTooManyEvents, "more than %d frames; larger recordings are refused", MaxEvents)
		ok = false
	}
	if ok {
		sec, output := 0.0, 0
		for i, f := range frames.Elems {
			at := "$.stdout[" + strconv.Itoa(i) + "]"
			if col.Full() {
				break
			}
			if f.Kind != strictjson.Array || len(f.Elems) != 2 {
				ck.Add(at, CodeWrongType, "a v1 frame must be a 2-element array [delay, data]")
				continue
			}
			delay, okT := number(ck, f.Elems[0], at+"[0]", 0)
			data, okD := str(ck, f.Elems[1], at+"[1]")
			if !okT || !okD {
				continue
			}
			sec += delay
			ms := math.Round(sec * 1000)
			if ms > MaxDurationMS {
				ck.Add(at+"[0]", CodeInvalidValue, "the frame is %.0f s into the recording; recordings longer than %d s are refused", sec, MaxDurationMS/1000)
				break
			}
			if output += len(data); output > MaxOutputBytes {
				ck.Add(at+"[1]", CodeOutputTooLarge, "the output data exceeds %d bytes here; larger recordings are refused", MaxOutputBytes)
				break
			}
			c.events = append(c.events, event{ms: int(ms), code: "o", data: data})
		}
	}
	l.fromStrict(0, col)
	if len(l.list) > 0 {
		return nil, l.list
	}
	return c, nil
}
