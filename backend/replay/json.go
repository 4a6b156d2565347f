package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf8"
)

// kind is the JSON type of a value.
type kind byte

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

func (k kind) String() string {
	switch k {
	case kindBool:
		return "a boolean"
	case kindNumber:
		return "a number"
	case kindString:
		return "a string"
	case kindArray:
		return "an array"
	case kindObject:
		return "an object"
	}
	return "null"
}

// value is one decoded JSON value. Objects keep their own members in
// document order and nothing else: there is no prototype, so a key such as
// "__proto__", "constructor" or "toString" is an ordinary member name that
// exists only when the document holds it.
type value struct {
	kind  kind
	b     bool
	str   string // string content, or the number literal
	keys  []string
	vals  []*value
	elems []*value
}

// member returns the object's own member named key.
func (v *value) member(key string) (*value, bool) {
	if v.kind != kindObject {
		return nil, false
	}
	for i, k := range v.keys {
		if k == key {
			return v.vals[i], true
		}
	}
	return nil, false
}

// at follows path from v: a string step selects an object member (own
// members only), an index step selects an array element. A step of the
// wrong kind (an index into an object, a key into an array) never matches;
// nothing is coerced.
func (v *value) at(path []PathStep) (*value, bool) {
	cur := v
	for _, s := range path {
		switch {
		case s.IsIndex:
			if cur.kind != kindArray || s.Index < 0 || s.Index >= len(cur.elems) {
				return nil, false
			}
			cur = cur.elems[s.Index]
		default:
			next, ok := cur.member(s.Key)
			if !ok {
				return nil, false
			}
			cur = next
		}
	}
	return cur, true
}

// equal compares two values structurally: object member order does not
// matter and numbers compare by their numeric value.
func equal(a, b *value) bool {
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case kindNull:
		return true
	case kindBool:
		return a.b == b.b
	case kindString:
		return a.str == b.str
	case kindNumber:
		if a.str == b.str {
			return true
		}
		x, err1 := strconv.ParseFloat(a.str, 64)
		y, err2 := strconv.ParseFloat(b.str, 64)
		return err1 == nil && err2 == nil && x == y
	case kindArray:
		if len(a.elems) != len(b.elems) {
			return false
		}
		for i := range a.elems {
			if !equal(a.elems[i], b.elems[i]) {
				return false
			}
		}
		return true
	}
	if len(a.keys) != len(b.keys) {
		return false
	}
	for i, k := range a.keys {
		bv, ok := b.member(k)
		if !ok || !equal(a.vals[i], bv) {
			return false
		}
	}
	return true
}

// jsonLimits bound one decoding.
type jsonLimits struct {
	depth  int // the root is at depth 1
	values int // scalars and containers, not member names
}

// errMalformed ends decoding: the issue has been recorded.
var errMalformed = errors.New("malformed")

// decodeJSON decodes data, which must be valid UTF-8 (no byte order mark)
// holding exactly one JSON value and nothing but whitespace after it.
// Duplicate member names are reported at their path and decoding goes on;
// syntax errors and exceeded limits stop it. It returns nil when the
// document is malformed. root is the path of the document ("$").
func decodeJSON(data []byte, root string, lim jsonLimits, issues *issueList) *value {
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		issues.add(root, CodeInvalidJSON, "the document starts with a byte order mark")
		return nil
	}
	if !utf8.Valid(data) {
		issues.add(root, CodeInvalidUTF8, "the document is not valid UTF-8")
		return nil
	}
	d := &decoder{dec: json.NewDecoder(bytes.NewReader(data)), lim: lim, issues: issues}
	d.dec.UseNumber()
	v, err := d.value(root, 1)
	if err != nil {
		return nil
	}
	for off := int(d.dec.InputOffset()); off < len(data); off++ {
		if c := data[off]; c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			issues.add(root, CodeInvalidJSON, "data follows the JSON value at byte offset %d", off)
			return nil
		}
	}
	return v
}

// parseBody decodes an event body as JSON for request_json and
// websocket_json sources. It reports nothing: a body that is not JSON
// simply resolves no path.
func parseBody(s string) (*value, bool) {
	var l issueList
	l.max = 1
	v := decodeJSON([]byte(s), "$", jsonLimits{depth: MaxBodyDepth, values: MaxBodyValues}, &l)
	return v, v != nil && len(l.list) == 0
}

type decoder struct {
	dec    *json.Decoder
	lim    jsonLimits
	count  int
	issues *issueList
}

func (d *decoder) syntax(path string, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		d.issues.add(path, CodeInvalidJSON, "malformed JSON at byte offset %d", se.Offset)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		d.issues.add(path, CodeInvalidJSON, "the document ends before the JSON value is complete")
	default:
		d.issues.add(path, CodeInvalidJSON, "malformed JSON near byte offset %d", d.dec.InputOffset())
	}
	return errMalformed
}

func (d *decoder) value(path string, depth int) (*value, error) {
	tok, err := d.dec.Token()
	if err != nil {
		return nil, d.syntax(path, err)
	}
	d.count++
	if d.count > d.lim.values {
		d.issues.add(path, CodeTooLarge, "the document holds more than %d JSON values", d.lim.values)
		return nil, errMalformed
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth > d.lim.depth {
			d.issues.add(path, CodeTooDeep, "nesting exceeds the limit of %d levels", d.lim.depth)
			return nil, errMalformed
		}
		if t == '{' {
			return d.object(path, depth)
		}
		return d.array(path, depth)
	case string:
		return &value{kind: kindString, str: t}, nil
	case json.Number:
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil || math.IsInf(f, 0) {
			d.issues.add(path, CodeInvalidValue, "the number is outside the range of an IEEE-754 double")
		}
		return &value{kind: kindNumber, str: string(t)}, nil
	case bool:
		return &value{kind: kindBool, b: t}, nil
	}
	return &value{kind: kindNull}, nil
}

func (d *decoder) object(path string, depth int) (*value, error) {
	v := &value{kind: kindObject}
	seen := map[string]bool{}
	for d.dec.More() {
		tok, err := d.dec.Token()
		if err != nil {
			return nil, d.syntax(path, err)
		}
		key, _ := tok.(string)
		at := path + keyPath(key)
		dup := seen[key]
		if dup {
			d.issues.add(at, CodeDuplicateKey, "the member name appears more than once in this object")
		}
		seen[key] = true
		mv, err := d.value(at, depth+1)
		if err != nil {
			return nil, err
		}
		if !dup {
			v.keys = append(v.keys, key)
			v.vals = append(v.vals, mv)
		}
	}
	if _, err := d.dec.Token(); err != nil {
		return nil, d.syntax(path, err)
	}
	return v, nil
}

func (d *decoder) array(path string, depth int) (*value, error) {
	v := &value{kind: kindArray}
	for i := 0; d.dec.More(); i++ {
		e, err := d.value(fmt.Sprintf("%s[%d]", path, i), depth+1)
		if err != nil {
			return nil, err
		}
		v.elems = append(v.elems, e)
	}
	if _, err := d.dec.Token(); err != nil {
		return nil, d.syntax(path, err)
	}
	return v, nil
}

// keyPath is the path step for an object member: ".name" for
// identifier-like names, `["odd name"]` otherwise. Long names are cut.
func keyPath(key string) string {
	ident := key != ""
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			ident = false
			break
		}
	}
	k := truncate(key, 64)
	if ident {
		return "." + k
	}
	q, _ := json.Marshal(k)
	return "[" + string(q) + "]"
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
