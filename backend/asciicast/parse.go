package asciicast

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// cast is a parsed asciicast file: its header and its events in order,
// with times already absolute (v3 intervals summed).
type cast struct {
	version   int
	size      Size
	title     *string
	command   *string
	timestamp *int64
	idle      *float64
	termType  *string
	events    []event
	// tolerated lists, in order and once each, what was read leniently
	// (see lenient.go); Import adds each to the limitations.
	tolerated tolerances
}

// event is one event line: the absolute time in milliseconds, its code,
// its data and the line it came from.
type event struct {
	line int
	ms   int
	code string
	data string
	// for "r": the new size
	size Size
}

// issues gathers Issues up to MaxIssues, the last one then being
// CodeTooManyIssues.
type issues struct{ list []Issue }

func (l *issues) add(line int, path, code, format string, args ...any) {
	if len(l.list) >= MaxIssues {
		return
	}
	if len(l.list) == MaxIssues-1 {
		l.list = append(l.list, Issue{Line: 0, Issue: strictjson.Issue{Path: "$", Code: CodeTooManyIssues, Message: "too many issues; the rest are not reported"}})
		return
	}
	l.list = append(l.list, Issue{Line: line, Issue: strictjson.Issue{Path: path, Code: code, Message: fmt.Sprintf(format, args...)}})
}

func (l *issues) full() bool { return len(l.list) >= MaxIssues }

// fromStrict copies the issues of a strictjson collector, tagged with line.
func (l *issues) fromStrict(line int, c *strictjson.Collector) {
	for _, is := range c.List {
		code := is.Code
		switch code { // strictjson's finer codes map onto this package's
		case strictjson.CodeNotInteger, strictjson.CodeOutOfRange, strictjson.CodeInvalidLength,
			strictjson.CodeTooManyEntries, strictjson.CodeTooFewEntries, strictjson.CodeInvalidString,
			strictjson.CodeInexactNumber:
			code = CodeInvalidValue
		case strictjson.CodeTooDeep, strictjson.CodeTooLarge, strictjson.CodeDuplicateKey:
			code = CodeInvalidJSON
		}
		l.add(line, is.Path, code, "%s", is.Message)
	}
}

var decodeOptions = strictjson.Options{
	MaxDepth: 4, MaxValues: 10_000, Surrogates: true,
	Wording: strictjson.Wording{
		EOF:       "the line ends inside a JSON value",
		Trailing:  "unexpected data after the JSON value at byte offset %d of the line",
		Duplicate: "duplicate member name",
		Number:    "number outside the double range",
	},
}

// parse reads an asciicast v1, v2 or v3 file (lenient.go says what it
// tolerates). It stops at the first line that
// breaks a limit; other problems are collected up to MaxIssues.
func parse(data []byte) (*cast, []Issue) {
	var l issues
	if len(data) > MaxInputBytes {
		l.add(0, "$", CodeTooLarge, "the file is %d bytes; files above %d bytes are refused", len(data), MaxInputBytes)
		return nil, l.list
	}
	c := &cast{}
	if rest, ok := bytes.CutPrefix(data, []byte(utf8BOM)); ok {
		data = rest
		c.tolerated.add(tolBOM)
	}
	if doc, ok := v1Document(data); ok {
		return c.v1(doc, &l)
	}
	lines := bytes.Split(data, []byte{'\n'})
	if n := len(lines); n > 0 && len(lines[n-1]) == 0 {
		lines = lines[:n-1] // the newline that ends the last line
	}
	if len(lines) == 0 || len(bytes.TrimSpace(lines[0])) == 0 {
		l.add(1, "$", CodeEmpty, "the first line must be the asciicast header (a JSON object)")
		return nil, l.list
	}
	if lines[0][0] == '#' {
		l.add(1, "$", CodeCommentNotAllowed, "the first line must be the header, not a comment")
		return nil, l.list
	}
	if !c.header(lines[0], &l) {
		return nil, l.list
	}
	var (
		prevSec float64 // v2: the previous absolute time; v3: the running sum
		output  int
	)
	for i, raw := range lines[1:] {
		line := i + 2
		if l.full() {
			break
		}
		trimmed := bytes.TrimSpace(raw)
		if len(trimmed) == 0 {
			continue // blank lines carry nothing
		}
		if trimmed[0] == '#' {
			if c.version == 2 {
				c.tolerated.add(tolV2Comment)
			}
			continue
		}
		if len(c.events) == MaxEvents {
			l.add(line, "$", CodeTooManyEvents, "more than %d events; larger recordings are refused", MaxEvents)
			break
		}
		ev, ok := c.event(raw, line, &prevSec, &l)
		if !ok {
			continue
		}
		if ev.code == "o" {
			output += len(ev.data)
			if output > MaxOutputBytes {
				l.add(line, "$[2]", CodeOutputTooLarge, "the output data exceeds %d bytes here; larger recordings are refused", MaxOutputBytes)
				break
			}
		}
		c.events = append(c.events, ev)
	}
	if len(l.list) > 0 {
		return nil, l.list
	}
	return c, nil
}

// decodeLine decodes one line as a JSON value, reporting problems at line.
func decodeLine(raw []byte, line int, l *issues) *strictjson.Node {
	if !utf8.Valid(raw) {
		l.add(line, "$", CodeInvalidUTF8, "the line is not valid UTF-8")
		return nil
	}
	col := &strictjson.Collector{Max: MaxIssues}
	n := strictjson.Decode(raw, "$", decodeOptions, col)
	l.fromStrict(line, col)
	if n == nil || !col.Empty() {
		return nil
	}
	return n
}

var (
	v2HeaderFields = []string{"version", "width", "height", "timestamp", "duration", "idle_time_limit", "command", "title", "env", "theme"}
	v3HeaderFields = []string{"version", "term", "timestamp", "idle_time_limit", "command", "title", "env", "tags"}
	termFields     = []string{"cols", "rows", "type", "version", "theme"}
	themeFields    = []string{"fg", "bg", "palette"}
)

// header reads the header line; it reports whether events can be read.
func (c *cast) header(raw []byte, l *issues) bool {
	n := decodeLine(raw, 1, l)
	if n == nil {
		return false
	}
	col := &strictjson.Collector{Max: MaxIssues}
	ck := &strictjson.Checker{Issues: col, ListAllowed: true}
	defer l.fromStrict(1, col)
	if n.Kind != strictjson.Object {
		ck.Add("$", CodeWrongType, "the header must be a JSON object, not %s", n.Kind)
		return false
	}
	vn, ok := n.Member("version")
	if !ok {
		ck.Add("$.version", CodeMissingField, "required field is missing (2 or 3)")
		return false
	}
	v, ok := ck.Integer(vn, "$.version", math.MinInt32, math.MaxInt32)
	if !ok {
		return false
	}
	if v == 1 {
		ck.Add("$.version", CodeUnsupported, "an asciicast v1 file must be one JSON document with version, width, height and stdout")
		return false
	}
	if v != 2 && v != 3 {
		ck.Add("$.version", CodeUnsupported, "asciicast version %d is not supported (2 or 3)", v)
		return false
	}
	c.version = v
	var m strictjson.Members
	if v == 2 {
		m = c.members(ck, n, "$", v2HeaderFields...)
		c.size.Columns = c.dimension(ck, m, "$", "width", defaultColumns)
		c.size.Rows = c.dimension(ck, m, "$", "height", defaultRows)
		if d := present(m, "duration"); d != nil {
			number(ck, d, "$.duration", 0)
		}
		if t := present(m, "theme"); t != nil {
			c.theme(ck, t, "$.theme")
		}
	} else {
		m = c.members(ck, n, "$", v3HeaderFields...)
		if tn, ok := ck.Required(m, "$", "term"); ok {
			if tm := c.members(ck, tn, "$.term", termFields...); tm != nil {
				c.size.Columns = c.dimension(ck, tm, "$.term", "cols", defaultColumns)
				c.size.Rows = c.dimension(ck, tm, "$.term", "rows", defaultRows)
				c.termType = optString(ck, tm, "$.term", "type")
				optString(ck, tm, "$.term", "version")
				if t := present(tm, "theme"); t != nil {
					c.theme(ck, t, "$.term.theme")
				}
			}
		}
		if t := present(m, "tags"); t != nil {
			if elems, ok := ck.Array(t, "$.tags", 0, 1000); ok {
				for i, e := range elems {
					str(ck, e, "$.tags["+strconv.Itoa(i)+"]")
				}
			}
		}
	}
	if t := present(m, "timestamp"); t != nil {
		c.timestamp = c.unixTime(ck, t, "$.timestamp")
	}
	if t := present(m, "idle_time_limit"); t != nil {
		if f, ok := number(ck, t, "$.idle_time_limit", 0); ok {
			if f == 0 {
				c.tolerated.add(tolIdleZero)
			} else {
				c.idle = &f
			}
		}
	}
	c.command = optString(ck, m, "$", "command")
	c.title = optString(ck, m, "$", "title")
	if e := present(m, "env"); e != nil {
		c.env(ck, e, "$.env")
	}
	return col.Empty()
}

// present returns member key unless it is absent or null (null stands for
// an absent optional value).
func present(m strictjson.Members, key string) *strictjson.Node {
	n := m[key]
	if n == nil || n.Kind == strictjson.Null {
		return nil
	}
	return n
}

func optString(ck *strictjson.Checker, m strictjson.Members, path, key string) *string {
	n := present(m, key)
	if n == nil {
		return nil
	}
	s, ok := str(ck, n, path+"."+key)
	if !ok {
		return nil
	}
	return &s
}

func str(ck *strictjson.Checker, n *strictjson.Node, path string) (string, bool) {
	s, ok := ck.Str(n, path)
	if ok && len(s) > MaxDataBytes {
		ck.Add(path, CodeInvalidValue, "longer than %d bytes", MaxDataBytes)
		return "", false
	}
	return s, ok
}

// number reads a finite number ≥ min.
func number(ck *strictjson.Checker, n *strictjson.Node, path string, min float64) (float64, bool) {
	if n.Kind != strictjson.Number {
		ck.Add(path, CodeWrongType, "must be a number, not %s", n.Kind)
		return 0, false
	}
	f, err := strconv.ParseFloat(n.Str, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || f < min {
		ck.Add(path, CodeInvalidValue, "%s must be a finite number ≥ %g", strictjson.Truncate(n.Str, 40), min)
		return 0, false
	}
	return f, true
}

func (c *cast) theme(ck *strictjson.Checker, n *strictjson.Node, path string) {
	m := c.members(ck, n, path, themeFields...)
	for _, k := range themeFields {
		if v := present(m, k); v != nil {
			str(ck, v, path+"."+k)
		}
	}
}

// event reads one event line [time, code, data]; prev is the previous
// absolute time (v2) or the running sum of intervals (v3), in seconds.
func (c *cast) event(raw []byte, line int, prev *float64, l *issues) (event, bool) {
	n := decodeLine(raw, line, l)
	if n == nil {
		return event{}, false
	}
	col := &strictjson.Collector{Max: MaxIssues}
	ck := &strictjson.Checker{Issues: col}
	defer l.fromStrict(line, col)
	if n.Kind != strictjson.Array || len(n.Elems) != 3 {
		ck.Add("$", CodeWrongType, "an event must be a 3-element array [time, code, data]")
		return event{}, false
	}
	t, ok := number(ck, n.Elems[0], "$[0]", 0)
	code, okC := ck.Str(n.Elems[1], "$[1]")
	data, okD := str(ck, n.Elems[2], "$[2]")
	if !ok || !okC || !okD {
		return event{}, false
	}
	abs := t
	if c.version == 3 {
		abs = *prev + t // v3 times are intervals since the previous event
	} else if t < *prev {
		ck.Add("$[0]", CodeTimeOrder, "time %s is before the previous event's %s", strictjson.Truncate(n.Elems[0].Str, 40), strconv.FormatFloat(*prev, 'f', -1, 64))
		return event{}, false
	}
	ms := math.Round(abs * 1000)
	if ms > MaxDurationMS {
		ck.Add("$[0]", CodeInvalidValue, "the event is %.0f s into the recording; recordings longer than %d s are refused", abs, MaxDurationMS/1000)
		return event{}, false
	}
	*prev = abs
	ev := event{line: line, ms: int(ms), code: code, data: data}
	switch code {
	case "o", "i", "m":
	case "r":
		size, ok := parseSize(data)
		if !ok {
			ck.Add("$[2]", CodeInvalidValue, "a resize must be COLSxROWS with each 1–%d, not %q", MaxTerminalSize, strictjson.Truncate(data, 40))
			return event{}, false
		}
		ev.size = size
	case "x":
		if _, ok := parseStatus(data); !ok {
			ck.Add("$[2]", CodeInvalidValue, "an exit event's data must be the exit status, an integer 0–255, not %q", strictjson.Truncate(data, 40))
			return event{}, false
		}
		if c.version == 2 {
			c.tolerated.add(tolV2Exit)
		}
	case "":
		ck.Add("$[1]", CodeUnknownEvent, "the event code is empty")
		return event{}, false
	default:
		// asciinema's reader keeps unknown codes and its player skips
		// them: they carry nothing Gatehouse can show
		c.tolerated.addUnknownCode(code)
		ev.code = ""
	}
	return ev, true
}

// parseSize reads "COLSxROWS".
func parseSize(s string) (Size, bool) {
	cs, rs, ok := strings.Cut(s, "x")
	if !ok {
		return Size{}, false
	}
	c, err1 := strconv.Atoi(cs)
	r, err2 := strconv.Atoi(rs)
	if err1 != nil || err2 != nil || c < 1 || r < 1 || c > MaxTerminalSize || r > MaxTerminalSize ||
		strconv.Itoa(c) != cs || strconv.Itoa(r) != rs {
		return Size{}, false
	}
	return Size{c, r}, true
}

// parseStatus reads a v3 exit status.
func parseStatus(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 255 || strconv.Itoa(n) != s {
		return 0, false
	}
	return n, true
}
