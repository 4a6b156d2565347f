package compare

// Why this decoder does not use backend/internal/strictjson, the strict
// reader shared by capture, replay, reactive and evidence:
//
//   - It is the hot path of Compare and trace evaluation: it decodes the
//     normalized_result of both envelopes (10,000+ frames) on every call.
//     On a 10,000-frame capture result (860 KB) it decodes 6.0x faster
//     than strictjson.Decode (built on encoding/json's Token stream), with
//     5.9x fewer allocations (90k against 530k) and 2.7x less memory
//     (go test -bench on the same input, 2026-11-30) — a regression the
//     < 100 ms goal of BenchmarkCompare cannot afford.
//   - Its lenient mode (decodeJSON) must decode exactly as encoding/json
//     with UseNumber does — the last duplicate member wins and an unpaired
//     surrogate becomes U+FFFD — which FuzzParseJSON checks against
//     encoding/json; strictjson never accepts a duplicate silently. The
//     input was already checked strictly by evidence.Parse (which does use
//     strictjson), so repeating the strict checks would only cost time.
//   - Its results are the map[string]any / []any / json.Number values that
//     equalJSON, canonKey and the trace evaluator work on, and its errors
//     are byte offsets, not a tree of Nodes with per-path issues.
//
// Trace specs, which people write and whose errors need paths, are read by
// strictjson (ParseTraceSpec), so this decoder has no strict mode. It shares
// the depth limit of evidence.Parse.

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxJSONDepth is the deepest nesting parseJSON admits (as evidence.Parse).
const maxJSONDepth = 512

// jsonError is a syntax error at a byte offset.
type jsonError struct {
	offset int
	msg    string
}

func (e *jsonError) Error() string { return fmt.Sprintf("%s at offset %d", e.msg, e.offset) }

// jsonParser decodes one JSON document into the values encoding/json
// produces for any with UseNumber (nil, bool, string, json.Number, []any,
// map[string]any), several times faster than encoding/json because it makes
// a single pass without reflection. As in encoding/json, the last duplicate
// member wins and an unpaired surrogate escape becomes U+FFFD.
// Invalid UTF-8 inside strings is kept as is (callers that care check
// utf8.Valid first).
type jsonParser struct {
	data  string
	pos   int
	depth int
	keys  map[string]string // interned member names
}

// parseJSON decodes exactly one JSON value (surrounded by optional
// whitespace) from data. data is a string (a verified record's bytes,
// record.Verified.JSON, which no one can change) so that an unescaped
// string or a number is a substring of it, not a copy: decoded values
// share data's memory and keep it alive.
func parseJSON(data string) (any, error) {
	p := &jsonParser{data: data, keys: make(map[string]string, 64)}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.data) {
		return nil, p.fail("data follows the JSON value")
	}
	return v, nil
}

func (p *jsonParser) fail(msg string) error { return &jsonError{p.pos, msg} }

func (p *jsonParser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsonParser) value() (any, error) {
	p.space()
	if p.pos >= len(p.data) {
		return nil, p.fail("unexpected end of JSON input")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.str()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return nil, p.fail(fmt.Sprintf("invalid character %q looking for a value", p.data[p.pos]))
}

func (p *jsonParser) literal(word string) error {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return p.fail("invalid literal")
	}
	p.pos += len(word)
	return nil
}

func (p *jsonParser) enter() error {
	p.depth++
	if p.depth > maxJSONDepth {
		return p.fail(fmt.Sprintf("nesting exceeds %d levels", maxJSONDepth))
	}
	return nil
}

// open enters the object or array at its opening bracket and reports
// whether members or elements follow; when close follows at once it has
// left the (empty) value already.
func (p *jsonParser) open(close byte) (bool, error) {
	if err := p.enter(); err != nil {
		return false, err
	}
	p.pos++ // '{' or '['
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == close {
		p.pos++
		p.depth--
		return false, nil
	}
	return true, nil
}

// next moves past the ',' after a member or element and reports true, or
// past close, leaving the object or array (what), and reports false.
func (p *jsonParser) next(close byte, what string) (bool, error) {
	p.space()
	if p.pos >= len(p.data) {
		return false, p.fail("unexpected end of JSON input")
	}
	switch p.data[p.pos] {
	case ',':
		p.pos++
		return true, nil
	case close:
		p.pos++
		p.depth--
		return false, nil
	}
	return false, p.fail("expected ',' or '" + string(close) + "' in " + what)
}

func (p *jsonParser) object() (any, error) {
	more, err := p.open('}')
	if err != nil {
		return nil, err
	}
	m := make(map[string]any, 8)
	for more {
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.fail("expected a member name")
		}
		k, err := p.key()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.fail("expected ':' after a member name")
		}
		p.pos++
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		m[k] = v
		if more, err = p.next('}', "an object"); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (p *jsonParser) array() (any, error) {
	more, err := p.open(']')
	if err != nil {
		return nil, err
	}
	a := make([]any, 0, 4)
	for more {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		if more, err = p.next(']', "an array"); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// key reads a member name, sharing one string per distinct simple name.
func (p *jsonParser) key() (string, error) {
	start := p.pos + 1
	for i := start; i < len(p.data) && i-start <= 64; i++ {
		c := p.data[i]
		if c == '"' {
			if k, ok := p.keys[string(p.data[start:i])]; ok {
				p.pos = i + 1
				return k, nil
			}
			break
		}
		if c == '\\' || c < 0x20 {
			break
		}
	}
	k, err := p.str()
	if err == nil && len(k) <= 64 && len(p.keys) < 4096 {
		p.keys[k] = k
	}
	return k, err
}

func (p *jsonParser) str() (string, error) {
	p.pos++ // opening quote
	start := p.pos
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			s := string(p.data[start:p.pos])
			p.pos++
			return s, nil
		case c == '\\':
			return p.escaped(start)
		case c < 0x20:
			return "", p.fail("control character in a string")
		}
		p.pos++
	}
	return "", p.fail("unterminated string")
}

// escaped finishes a string that contains escapes, from its first
// character at start.
func (p *jsonParser) escaped(start int) (string, error) {
	buf := make([]byte, 0, p.pos-start+16)
	buf = append(buf, p.data[start:p.pos]...)
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(buf), nil
		case c < 0x20:
			return "", p.fail("control character in a string")
		case c != '\\':
			buf = append(buf, c)
			p.pos++
			continue
		}
		if p.pos+1 >= len(p.data) {
			return "", p.fail("unterminated string")
		}
		e := p.data[p.pos+1]
		p.pos += 2
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", p.fail("invalid \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				save := p.pos
				if r < 0xDC00 && p.pos+1 < len(p.data) && p.data[p.pos] == '\\' && p.data[p.pos+1] == 'u' {
					p.pos += 2
					if lo, ok := p.hex4(); ok && lo >= 0xDC00 && lo <= 0xDFFF {
						r2 = lo
					} else {
						p.pos = save
					}
				}
				if r2 < 0 {
					r = utf8.RuneError
				} else {
					r = utf16.DecodeRune(r, r2)
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", p.fail("invalid escape in a string")
		}
	}
	return "", p.fail("unterminated string")
}

func (p *jsonParser) hex4() (rune, bool) {
	if p.pos+4 > len(p.data) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(p.data[p.pos:p.pos+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.pos += 4
	return rune(v), true
}

func (p *jsonParser) number() (any, error) {
	start := p.pos
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.data[p.pos] == '-' {
		p.pos++
	}
	if p.pos < len(p.data) && p.data[p.pos] == '0' {
		p.pos++
	} else if digits() == 0 {
		return nil, p.fail("invalid number")
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return nil, p.fail("invalid number")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.fail("invalid number")
		}
	}
	return json.Number(p.data[start:p.pos]), nil
}
