package evidence

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
	"github.com/gowebpki/jcs"
)

// Why a hand-written canonicalizer: github.com/gowebpki/jcs builds a tree
// of Go strings through strings.Builder one byte at a time and checks every
// number with a regular expression, so one pass over a 10 MB capture
// record takes about a second, and sealing and parsing a capture each need
// one. canonicalize below produces the same bytes and refuses the same
// inputs in one linear pass with a flat node list (no copy per nesting
// level, so deep nesting stays O(n)); canonical_fast_test.go checks it
// against jcs.Transform, the reference, on the corpus, on capture-shaped
// records and on fuzzed input. Numbers are still formatted by
// jcs.NumberToJSON.

// maxCanonicalDepth is jcs.Transform's nesting limit (its maxNestingDepth):
// an array or object nested deeper is refused, as jcs refuses it.
const maxCanonicalDepth = 10000

// maxCanonicalBytes bounds the input so offsets fit the nodes' int32s.
const maxCanonicalBytes = 1 << 30

type cnode struct {
	kind byte // 's' scalar, 'r' scalar already canonical in the input, 'a' array, 'o' object
	// scalar: canonical text text[a:b] ('r': in[a:b]). container: children kids[a:b]
	// (for objects, key and value node indices alternating, sorted).
	a, b int32
	// object keys only: the decoded key keys[c:d], the sort key.
	c, d int32
}

type canonicalizer struct {
	in    []byte
	i     int
	depth int
	check bool    // canonicalCheck: nothing will be written, so no text is kept
	text  []byte  // canonical text of scalars
	keys  []byte  // decoded object keys
	nodes []cnode // every value and key, in document order
	kids  []int32 // children of containers, each container's contiguous
	stack []int32 // children of the containers being read
}

// canonicalize is the RFC 8785 form of the single JSON value in data, the
// same bytes jcs.Transform returns, and fails exactly when it fails.
func canonicalize(data []byte) ([]byte, error) { return canonicalizeAt(data, 0) }

// canonicalizeAt is canonicalize of a value nested depth arrays or
// objects deep in a larger document: it refuses the nesting the whole
// document would be refused for.
func canonicalizeAt(data []byte, depth int) ([]byte, error) {
	c, root, err := canonicalRead(data, depth, false)
	if err != nil {
		return nil, err
	}
	return c.write(make([]byte, 0, c.size(root)), root), nil
}

// canonicalizeTo is canonicalizeAt that writes the form to w (through a
// buffer of 64 KiB) instead of returning it: a 10 MB record is hashed
// without a copy of its canonical form.
func canonicalizeTo(w io.Writer, data []byte, depth int) error {
	c, root, err := canonicalRead(data, depth, false)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	c.writeTo(bw, root)
	return bw.Flush()
}

// canonicalCheck is canonicalize that stops before writing the form: it
// fails exactly when canonicalize fails.
func canonicalCheck(data []byte) error {
	_, _, err := canonicalRead(data, 0, true)
	return err
}

// canonicalRead reads data into a canonicalizer (every check made) and
// returns it with the root node, ready to write.
//
// With check set no canonical text is kept (canonicalCheck). A string
// already in its canonical form (only the escapes RFC 8785 writes, valid
// UTF-8) is a node over its input bytes, not copied (strValue), so the
// buffers start small and grow only with what must be rewritten.
func canonicalRead(data []byte, depth int, check bool) (*canonicalizer, int32, error) {
	if data == nil {
		return nil, 0, errors.New("no JSON data provided")
	}
	if len(data) > maxCanonicalBytes {
		return nil, 0, fmt.Errorf("JSON of %d bytes is beyond the %d bytes canonicalized", len(data), maxCanonicalBytes)
	}
	c := &canonicalizer{in: data, depth: depth, check: check, text: make([]byte, 0, min(len(data), 4<<10)), nodes: make([]cnode, 0, min(len(data)/32+8, 1<<10))}
	root, err := c.value()
	if err != nil {
		return nil, 0, err
	}
	c.skipSpace()
	if c.i < len(c.in) {
		return nil, 0, fmt.Errorf("unexpected content after the JSON value at offset %d", c.i)
	}
	return c, root, nil
}

func (c *canonicalizer) skipSpace() {
	for c.i < len(c.in) {
		switch c.in[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

func (c *canonicalizer) errAt(msg string) error {
	return fmt.Errorf("%s at offset %d", msg, c.i)
}

func (c *canonicalizer) value() (int32, error) {
	c.skipSpace()
	if c.i >= len(c.in) {
		return 0, c.errAt("unexpected end of JSON")
	}
	switch ch := c.in[c.i]; {
	case ch == '{':
		return c.object()
	case ch == '[':
		return c.array()
	case ch == '"':
		return c.strValue()
	case ch == 't', ch == 'f', ch == 'n':
		for _, lit := range [...]string{"true", "false", "null"} {
			if len(c.in)-c.i >= len(lit) && string(c.in[c.i:c.i+len(lit)]) == lit {
				c.i += len(lit)
				if err := c.delimited(); err != nil {
					return 0, err
				}
				start := len(c.text)
				c.text = append(c.text, lit...)
				return c.scalar(start), nil
			}
		}
		return 0, c.errAt("invalid literal")
	default:
		return c.number()
	}
}

// delimited checks that a literal or number ends where jcs ends it: at the
// end of input, whitespace, ',', ']' or '}'.
func (c *canonicalizer) delimited() error {
	if c.i >= len(c.in) {
		return nil
	}
	switch c.in[c.i] {
	case ' ', '\t', '\n', '\r', ',', ']', '}':
		return nil
	}
	return c.errAt("invalid literal or number")
}

func (c *canonicalizer) scalar(start int) int32 {
	c.nodes = append(c.nodes, cnode{kind: 's', a: int32(start), b: int32(len(c.text))})
	return int32(len(c.nodes) - 1)
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// number reads the RFC 8259 number grammar, then formats the double it
// denotes as ECMAScript does (jcs.NumberToJSON).
func (c *canonicalizer) number() (int32, error) {
	start, in := c.i, c.in
	j := c.i
	if j < len(in) && in[j] == '-' {
		j++
	}
	switch {
	case j < len(in) && in[j] == '0':
		j++
	case j < len(in) && isDigit(in[j]):
		for j < len(in) && isDigit(in[j]) {
			j++
		}
	default:
		return 0, c.errAt("invalid literal or number")
	}
	if j < len(in) && in[j] == '.' {
		j++
		if j >= len(in) || !isDigit(in[j]) {
			return 0, c.errAt("invalid number")
		}
		for j < len(in) && isDigit(in[j]) {
			j++
		}
	}
	if j < len(in) && (in[j] == 'e' || in[j] == 'E') {
		j++
		if j < len(in) && (in[j] == '+' || in[j] == '-') {
			j++
		}
		if j >= len(in) || !isDigit(in[j]) {
			return 0, c.errAt("invalid number")
		}
		for j < len(in) && isDigit(in[j]) {
			j++
		}
	}
	c.i = j
	if err := c.delimited(); err != nil {
		return 0, err
	}
	tok := in[start:j]
	ts := len(c.text)
	if len(tok) == 1 || (len(tok) < 16 && allDigits(tok)) {
		// A short integer without sign, fraction or exponent (not 0-prefixed,
		// by the grammar) is exact as a double and is its own shortest form.
		if c.check {
			return 0, nil
		}
		c.nodes = append(c.nodes, cnode{kind: 'r', a: int32(start), b: int32(j)})
		return int32(len(c.nodes) - 1), nil
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return 0, fmt.Errorf("number out of range at offset %d", start)
	}
	s, err := jcs.NumberToJSON(f)
	if err != nil {
		return 0, err
	}
	c.text = append(c.text, s...)
	return c.scalar(ts), nil
}

func allDigits(b []byte) bool {
	for _, x := range b {
		if !isDigit(x) {
			return false
		}
	}
	return true
}

const hexDigits = "0123456789abcdef"

// appendCanonicalRune writes r as RFC 8785 writes it inside a string.
func appendCanonicalRune(dst []byte, r rune) []byte {
	switch r {
	case '\\':
		return append(dst, '\\', '\\')
	case '"':
		return append(dst, '\\', '"')
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	if r < 0x20 {
		return append(dst, '\\', 'u', '0', '0', hexDigits[r>>4], hexDigits[r&0xF])
	}
	return utf8.AppendRune(dst, r)
}

// str reads a string whose opening quote is consumed, appending its
// canonical text (quoted) to c.text and, for a key, its decoded value to
// c.keys.
func (c *canonicalizer) str(key bool) error {
	in := c.in
	c.text = append(c.text, '"')
	for {
		// Copy the run of bytes that are their own canonical form.
		j := strictjson.PlainEnd(in, c.i)
		c.text = append(c.text, in[c.i:j]...)
		if key {
			c.keys = append(c.keys, in[c.i:j]...)
		}
		c.i = j
		if j >= len(in) {
			return c.errAt("unterminated string")
		}
		switch b := in[j]; {
		case b == '"':
			c.i++
			c.text = append(c.text, '"')
			return nil
		case b < 0x20:
			return c.errAt("control character in string")
		case b >= 0x80:
			r, n := utf8.DecodeRune(in[j:])
			if r == utf8.RuneError && n <= 1 {
				return c.errAt("invalid UTF-8 in string")
			}
			c.text = append(c.text, in[j:j+n]...)
			if key {
				c.keys = append(c.keys, in[j:j+n]...)
			}
			c.i += n
		default: // '\\'
			r, err := c.escape()
			if err != nil {
				return err
			}
			c.text = appendCanonicalRune(c.text, r)
			if key {
				c.keys = utf8.AppendRune(c.keys, r)
			}
		}
	}
}

// strValue reads a string value at its opening quote. One already in
// canonical form — printable ASCII and valid UTF-8 as they are, and only
// the escapes appendCanonicalRune writes — becomes an 'r' node over the
// input (with check set, no node text at all); any other is read again
// by str, which rewrites it and reports its errors.
func (c *canonicalizer) strValue() (int32, error) {
	in, start := c.in, c.i
	for j := start + 1; ; {
		j = strictjson.PlainEnd(in, j)
		if j >= len(in) {
			break
		}
		b := in[j]
		if b == '"' {
			c.i = j + 1
			if c.check {
				return 0, nil
			}
			c.nodes = append(c.nodes, cnode{kind: 'r', a: int32(start), b: int32(j + 1)})
			return int32(len(c.nodes) - 1), nil
		}
		if b >= 0x80 {
			r, n := utf8.DecodeRune(in[j:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			j += n
			continue
		}
		if n := canonicalEscape(in[j:]); n > 0 {
			j += n
			continue
		}
		break // a control byte, or an escape RFC 8785 writes otherwise
	}
	c.i = start + 1
	ts := len(c.text)
	if err := c.str(false); err != nil {
		return 0, err
	}
	if c.check {
		c.text = c.text[:ts]
		return 0, nil
	}
	return c.scalar(ts), nil
}

// canonicalEscape is the length of the escape sequence at the start of
// b when it is the one appendCanonicalRune writes for the code point it
// denotes (\" \\ \b \f \n \r \t, or \u00xx in lowercase for another
// control character), else 0.
func canonicalEscape(b []byte) int {
	if len(b) < 2 || b[0] != '\\' {
		return 0
	}
	switch b[1] {
	case '"', '\\', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(b) < 6 || b[2] != '0' || b[3] != '0' || (b[4] != '0' && b[4] != '1') {
			return 0
		}
		v := int(b[4]-'0') << 4
		switch h := b[5]; {
		case '0' <= h && h <= '9':
			v |= int(h - '0')
		case 'a' <= h && h <= 'f':
			v |= int(h-'a') + 10
		default:
			return 0
		}
		switch v {
		case '\b', '\f', '\n', '\r', '\t':
			return 0
		}
		return 6
	}
	return 0
}

// escape reads one escape sequence (at its backslash) and returns the code
// point it denotes; surrogates must come as a high-low pair.
func (c *canonicalizer) escape() (rune, error) {
	in := c.in
	if c.i+1 >= len(in) {
		return 0, c.errAt("unterminated escape")
	}
	e := in[c.i+1]
	c.i += 2
	switch e {
	case '"', '\\', '/':
		return rune(e), nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
	default:
		return 0, c.errAt("invalid escape")
	}
	u, ok := c.hex4()
	if !ok {
		return 0, c.errAt("invalid \\u escape")
	}
	if !utf16.IsSurrogate(rune(u)) {
		return rune(u), nil
	}
	if u >= 0xDC00 {
		return 0, c.errAt("lone low surrogate")
	}
	if c.i+1 >= len(in) || in[c.i] != '\\' || in[c.i+1] != 'u' {
		return 0, c.errAt("missing low surrogate")
	}
	c.i += 2
	lo, ok := c.hex4()
	if !ok {
		return 0, c.errAt("invalid \\u escape")
	}
	if lo < 0xDC00 || lo > 0xDFFF {
		return 0, c.errAt("invalid low surrogate")
	}
	return utf16.DecodeRune(rune(u), rune(lo)), nil
}

func (c *canonicalizer) hex4() (uint16, bool) {
	if len(c.in)-c.i < 4 {
		return 0, false
	}
	var v uint16
	for _, b := range c.in[c.i : c.i+4] {
		var d byte
		switch {
		case '0' <= b && b <= '9':
			d = b - '0'
		case 'a' <= b && b <= 'f':
			d = b - 'a' + 10
		case 'A' <= b && b <= 'F':
			d = b - 'A' + 10
		default:
			return 0, false
		}
		v = v<<4 | uint16(d)
	}
	c.i += 4
	return v, true
}

func (c *canonicalizer) enter() error {
	c.depth++
	if c.depth > maxCanonicalDepth {
		return c.errAt(fmt.Sprintf("nesting deeper than %d", maxCanonicalDepth))
	}
	return nil
}

func (c *canonicalizer) array() (int32, error) {
	if err := c.enter(); err != nil {
		return 0, err
	}
	c.i++ // '['
	base := len(c.stack)
	c.skipSpace()
	if c.i < len(c.in) && c.in[c.i] == ']' {
		c.i++
	} else {
		for {
			v, err := c.value()
			if err != nil {
				return 0, err
			}
			c.stack = append(c.stack, v)
			c.skipSpace()
			if c.i >= len(c.in) {
				return 0, c.errAt("unterminated array")
			}
			if c.in[c.i] == ']' {
				c.i++
				break
			}
			if c.in[c.i] != ',' {
				return 0, c.errAt("expected ',' or ']'")
			}
			c.i++
		}
	}
	c.depth--
	return c.container('a', base), nil
}

func (c *canonicalizer) container(kind byte, base int) int32 {
	a := len(c.kids)
	c.kids = append(c.kids, c.stack[base:]...)
	c.stack = c.stack[:base]
	c.nodes = append(c.nodes, cnode{kind: kind, a: int32(a), b: int32(len(c.kids))})
	return int32(len(c.nodes) - 1)
}

func (c *canonicalizer) object() (int32, error) {
	if err := c.enter(); err != nil {
		return 0, err
	}
	c.i++ // '{'
	base := len(c.stack)
	c.skipSpace()
	if c.i < len(c.in) && c.in[c.i] == '}' {
		c.i++
	} else {
		for {
			c.skipSpace()
			if c.i >= len(c.in) || c.in[c.i] != '"' {
				return 0, c.errAt("expected a member name")
			}
			c.i++
			ks, kd := len(c.text), len(c.keys)
			if err := c.str(true); err != nil {
				return 0, err
			}
			k := c.scalar(ks)
			c.nodes[k].c, c.nodes[k].d = int32(kd), int32(len(c.keys))
			c.skipSpace()
			if c.i >= len(c.in) || c.in[c.i] != ':' {
				return 0, c.errAt("expected ':'")
			}
			c.i++
			v, err := c.value()
			if err != nil {
				return 0, err
			}
			c.stack = append(c.stack, k, v)
			c.skipSpace()
			if c.i >= len(c.in) {
				return 0, c.errAt("unterminated object")
			}
			if c.in[c.i] == '}' {
				c.i++
				break
			}
			if c.in[c.i] != ',' {
				return 0, c.errAt("expected ',' or '}'")
			}
			c.i++
		}
	}
	c.depth--
	if err := c.sortMembers(c.stack[base:]); err != nil {
		return 0, err
	}
	return c.container('o', base), nil
}

func (c *canonicalizer) key(n int32) []byte {
	k := c.nodes[n]
	return c.keys[k.c:k.d]
}

// sortMembers orders the (key, value) pairs in m by their keys' UTF-16 code
// units and refuses a repeated key.
func (c *canonicalizer) sortMembers(m []int32) error {
	n := len(m) / 2
	sorted := true
	for i := 1; i < n; i++ {
		if cmp := compareUTF16(c.key(m[2*i-2]), c.key(m[2*i])); cmp >= 0 {
			if cmp == 0 {
				return fmt.Errorf("duplicate key %s", strconv.Quote(truncateKey(c.key(m[2*i]))))
			}
			sorted = false
			break
		}
	}
	if sorted {
		return nil
	}
	pairs := make([][2]int32, n)
	for i := range pairs {
		pairs[i] = [2]int32{m[2*i], m[2*i+1]}
	}
	slices.SortFunc(pairs, func(x, y [2]int32) int { return compareUTF16(c.key(x[0]), c.key(y[0])) })
	for i := range pairs {
		if i > 0 && compareUTF16(c.key(pairs[i-1][0]), c.key(pairs[i][0])) == 0 {
			return fmt.Errorf("duplicate key %s", strconv.Quote(truncateKey(c.key(pairs[i][0]))))
		}
		m[2*i], m[2*i+1] = pairs[i][0], pairs[i][1]
	}
	return nil
}

func truncateKey(k []byte) string {
	if len(k) > 32 {
		return string(k[:32]) + "…"
	}
	return string(k)
}

// compareUTF16 compares two valid UTF-8 strings by their UTF-16 code units.
// Byte order equals code point order; the two differ only where a
// supplementary character (a surrogate pair, D800–DFFF) meets a BMP
// character at or above U+E000.
func compareUTF16(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if i == len(a) || i == len(b) {
		return len(a) - len(b)
	}
	// Back up to the start of the differing code points.
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, _ := utf8.DecodeRune(a[i:])
	rb, _ := utf8.DecodeRune(b[i:])
	return int(utf16Unit(ra)) - int(utf16Unit(rb))
}

// utf16Unit is the first UTF-16 code unit of r, extended so that two
// supplementary characters with the same high surrogate still compare by
// their low one.
func utf16Unit(r rune) int64 {
	if r >= 0x10000 {
		hi, _ := utf16.EncodeRune(r)
		return int64(hi)<<16 | int64(r&0x3FF)
	}
	return int64(r) << 16
}

// size is the length of node n's canonical form.
func (c *canonicalizer) size(n int32) int {
	nd := c.nodes[n]
	switch nd.kind {
	case 's', 'r':
		return int(nd.b - nd.a)
	}
	kids := c.kids[nd.a:nd.b]
	total := 2 + max(len(kids)-1, 0) // brackets, and a ',' or ':' between kids
	for _, k := range kids {
		total += c.size(k)
	}
	return total
}

// writeTo writes node n's canonical form to w, the input's canonical
// strings straight from the input.
func (c *canonicalizer) writeTo(w *bufio.Writer, n int32) {
	nd := c.nodes[n]
	switch nd.kind {
	case 's':
		w.Write(c.text[nd.a:nd.b]) //nolint:errcheck // bufio keeps the first error; Flush returns it
	case 'r':
		w.Write(c.in[nd.a:nd.b]) //nolint:errcheck // see above
	case 'a':
		w.WriteByte('[') //nolint:errcheck // see above
		for i, k := range c.kids[nd.a:nd.b] {
			if i > 0 {
				w.WriteByte(',') //nolint:errcheck // see above
			}
			c.writeTo(w, k)
		}
		w.WriteByte(']') //nolint:errcheck // see above
	default:
		w.WriteByte('{') //nolint:errcheck // see above
		kids := c.kids[nd.a:nd.b]
		for i := 0; i < len(kids); i += 2 {
			if i > 0 {
				w.WriteByte(',') //nolint:errcheck // see above
			}
			c.writeTo(w, kids[i])
			w.WriteByte(':') //nolint:errcheck // see above
			c.writeTo(w, kids[i+1])
		}
		w.WriteByte('}') //nolint:errcheck // see above
	}
}

func (c *canonicalizer) write(out []byte, n int32) []byte {
	nd := c.nodes[n]
	switch nd.kind {
	case 's':
		return append(out, c.text[nd.a:nd.b]...)
	case 'r':
		return append(out, c.in[nd.a:nd.b]...)
	case 'a':
		out = append(out, '[')
		for i, k := range c.kids[nd.a:nd.b] {
			if i > 0 {
				out = append(out, ',')
			}
			out = c.write(out, k)
		}
		return append(out, ']')
	default:
		out = append(out, '{')
		kids := c.kids[nd.a:nd.b]
		for i := 0; i < len(kids); i += 2 {
			if i > 0 {
				out = append(out, ',')
			}
			out = c.write(out, kids[i])
			out = append(out, ':')
			out = c.write(out, kids[i+1])
		}
		return append(out, '}')
	}
}
