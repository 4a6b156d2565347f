package capture

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/gowebpki/jcs"
)

// node is one decoded JSON value. Objects keep their members in document
// order (duplicates included, so the checks can name them); numbers keep
// their literal.
type node struct {
	kind  byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	str   string
	num   string
	b     bool
	keys  []string
	vals  []*node
	elems []*node
}

// kindName names a node kind for messages.
func kindName(k byte) string {
	switch k {
	case 'o':
		return "an object"
	case 'a':
		return "an array"
	case 's':
		return "a string"
	case 'n':
		return "a number"
	case 'b':
		return "a boolean"
	}
	return "null"
}

// appendJSON appends the compact JSON encoding of n. Strings are escaped by
// encoding/json, numbers keep their literal.
func (n *node) appendJSON(buf []byte) []byte {
	switch n.kind {
	case 'o':
		buf = append(buf, '{')
		for i, k := range n.keys {
			if i > 0 {
				buf = append(buf, ',')
			}
			q, _ := json.Marshal(k)
			buf = append(buf, q...)
			buf = append(buf, ':')
			buf = n.vals[i].appendJSON(buf)
		}
		return append(buf, '}')
	case 'a':
		buf = append(buf, '[')
		for i, e := range n.elems {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = e.appendJSON(buf)
		}
		return append(buf, ']')
	case 's':
		q, _ := json.Marshal(n.str)
		return append(buf, q...)
	case 'n':
		return append(buf, n.num...)
	case 'b':
		return strconv.AppendBool(buf, n.b)
	}
	return append(buf, "null"...)
}

// raw returns the compact JSON encoding of n.
func (n *node) raw() json.RawMessage { return n.appendJSON(nil) }

// errStop ends decoding: the document is malformed.
var errStop = errors.New("stop")

// decoder turns the input into a node tree, reporting duplicate member
// names, unpaired surrogate escapes and numbers that RFC 8785 cannot keep
// exactly (these leave the tree usable), and syntax errors and excessive
// nesting (these stop decoding).
type decoder struct {
	data   []byte
	dec    *json.Decoder
	issues *issueList
}

// decodeDocument decodes data, which must be valid UTF-8 holding exactly one
// JSON value followed by nothing but whitespace. It returns nil when the
// document is malformed.
func decodeDocument(data []byte, issues *issueList) *node {
	d := &decoder{data: data, dec: json.NewDecoder(bytes.NewReader(data)), issues: issues}
	d.dec.UseNumber()
	n, err := d.value("$", 1)
	if err != nil {
		return nil
	}
	for off := int(d.dec.InputOffset()); off < len(data); off++ {
		if c := data[off]; c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			issues.add("$", CodeInvalidJSON, "data follows the scenario object at byte offset %d", off)
			return nil
		}
	}
	return n
}

func (d *decoder) syntax(path string, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		d.issues.add(path, CodeInvalidJSON, "malformed JSON at byte offset %d: %v", se.Offset, se)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		d.issues.add(path, CodeInvalidJSON, "unexpected end of input")
	default:
		d.issues.add(path, CodeInvalidJSON, "%s", truncate(err.Error(), 200))
	}
	return errStop
}

func (d *decoder) value(path string, depth int) (*node, error) {
	before := d.dec.InputOffset()
	tok, err := d.dec.Token()
	if err != nil {
		return nil, d.syntax(path, err)
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth > MaxDepth {
			d.issues.add(path, CodeTooDeep, "nesting exceeds the limit of %d levels", MaxDepth)
			return nil, errStop
		}
		if t == '{' {
			return d.object(path, depth)
		}
		return d.array(path, depth)
	case string:
		d.checkString(path, before)
		return &node{kind: 's', str: t}, nil
	case json.Number:
		d.checkNumber(path, string(t))
		return &node{kind: 'n', num: string(t)}, nil
	case bool:
		return &node{kind: 'b', b: t}, nil
	}
	return &node{kind: 'z'}, nil
}

func (d *decoder) object(path string, depth int) (*node, error) {
	n := &node{kind: 'o'}
	seen := map[string]bool{}
	for d.dec.More() {
		before := d.dec.InputOffset()
		tok, err := d.dec.Token()
		if err != nil {
			return nil, d.syntax(path, err)
		}
		key, _ := tok.(string)
		at := path + keyPath(key)
		d.checkString(at, before)
		if seen[key] {
			d.issues.add(at, CodeDuplicateKey, "member name appears more than once in this object")
		}
		seen[key] = true
		v, err := d.value(at, depth+1)
		if err != nil {
			return nil, err
		}
		n.keys = append(n.keys, key)
		n.vals = append(n.vals, v)
	}
	if _, err := d.dec.Token(); err != nil {
		return nil, d.syntax(path, err)
	}
	return n, nil
}

func (d *decoder) array(path string, depth int) (*node, error) {
	n := &node{kind: 'a'}
	for i := 0; d.dec.More(); i++ {
		v, err := d.value(fmt.Sprintf("%s[%d]", path, i), depth+1)
		if err != nil {
			return nil, err
		}
		n.elems = append(n.elems, v)
	}
	if _, err := d.dec.Token(); err != nil {
		return nil, d.syntax(path, err)
	}
	return n, nil
}

// checkString rejects unpaired surrogate escapes in the string literal just
// read (encoding/json would silently turn them into U+FFFD).
func (d *decoder) checkString(path string, before int64) {
	lit := d.data[before:d.dec.InputOffset()]
	if q := bytes.IndexByte(lit, '"'); q >= 0 {
		lit = lit[q:]
	}
	if bytes.Contains(lit, []byte(`\u`)) && !validSurrogates(lit) {
		d.issues.add(path, CodeInvalidString, "string escapes an unpaired UTF-16 surrogate")
	}
}

// checkNumber rejects numbers that RFC 8785 would not write back exactly
// (outside the double range, or integers beyond 2^53), as Evidence does.
func (d *decoder) checkNumber(path, lit string) {
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		d.issues.add(path, CodeInexactNumber, "number is outside the range of an IEEE-754 double")
		return
	}
	canon, err := jcs.NumberToJSON(f)
	if err != nil || !sameDecimal(lit, canon) {
		d.issues.add(path, CodeInexactNumber, "number is not exactly representable; RFC 8785 would write it as %s", canon)
	}
}
