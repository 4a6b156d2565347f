package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/gowebpki/jcs"
)

// errStop ends decoding: the issue has been recorded.
var errStop = errors.New("stop")

// Decode decodes data, which the caller has checked to be valid UTF-8,
// holding exactly one JSON value followed by nothing but whitespace. It
// records issues at paths below root ("$") and returns nil when the
// document is malformed or exceeds the limits; duplicate member names,
// unpaired surrogates and rejected numbers leave the tree usable.
func Decode(data []byte, root string, opt Options, issues *Collector) *Node {
	if len(data) >= fastMin { // fast.go: the same tree when nothing is wrong
		if n, ok := decodeFast(data, &opt); ok {
			return n
		}
	}
	return decodeTokens(data, root, opt, issues)
}

// decodeTokens is Decode by encoding/json's token stream, the decoder
// that records every issue.
func decodeTokens(data []byte, root string, opt Options, issues *Collector) *Node {
	d := &decoder{data: data, dec: json.NewDecoder(bytes.NewReader(data)), opt: &opt, issues: issues, root: root}
	d.dec.UseNumber()
	n, err := d.value(1)
	if err != nil {
		return nil
	}
	// Only whitespace may follow; it is scanned directly rather than
	// through the decoder, which would buffer it.
	for off := int(d.dec.InputOffset()); off < len(data); off++ {
		if !isSpace(data[off]) {
			issues.Add(root, opt.Codes.trailing(), opt.Wording.Trailing, off)
			return nil
		}
	}
	return n
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

type decoder struct {
	data   []byte
	dec    *json.Decoder
	opt    *Options
	count  int
	issues *Collector
	root   string
	steps  []step // the path from root to the value being decoded
}

// step is one member name or array index of a path. Paths are rendered only
// when an issue is recorded, so decoding a valid document builds none.
type step struct {
	key   string
	index int
	isKey bool
}

func (d *decoder) path() string {
	var b strings.Builder
	b.WriteString(d.root)
	for _, s := range d.steps {
		if s.isKey {
			b.WriteString(KeyPath(s.key))
		} else {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
		}
	}
	return b.String()
}

func (d *decoder) push(s step) { d.steps = append(d.steps, s) }
func (d *decoder) pop()        { d.steps = d.steps[:len(d.steps)-1] }

func (d *decoder) syntax(err error) error {
	path := d.path()
	var se *json.SyntaxError
	detailed := d.opt.Wording.Detailed
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		d.issues.Add(path, d.opt.Codes.truncated(), "%s", d.opt.Wording.eof())
	case d.opt.Wording.Syntax != "":
		d.issues.Add(path, CodeInvalidJSON, d.opt.Wording.Syntax, d.dec.InputOffset(), err)
	case errors.As(err, &se) && detailed:
		d.issues.Add(path, CodeInvalidJSON, "malformed JSON at byte offset %d: %v", se.Offset, se)
	case errors.As(err, &se):
		d.issues.Add(path, CodeInvalidJSON, "malformed JSON at byte offset %d", se.Offset)
	case detailed:
		d.issues.Add(path, CodeInvalidJSON, "%s", Truncate(err.Error(), 200))
	default:
		d.issues.Add(path, CodeInvalidJSON, "malformed JSON near byte offset %d", d.dec.InputOffset())
	}
	return errStop
}

func (d *decoder) value(depth int) (*Node, error) {
	before := d.dec.InputOffset()
	tok, err := d.dec.Token()
	if err != nil {
		return nil, d.syntax(err)
	}
	n, err := d.token(tok, depth, before)
	if n != nil {
		n.Off = d.start(before)
		n.End = int(d.dec.InputOffset())
	}
	return n, err
}

// start returns the offset of the first byte of the token read from
// before: the decoder's offset precedes the separators and whitespace.
func (d *decoder) start(before int64) int {
	off := int(before)
	for off < len(d.data) && (isSpace(d.data[off]) || d.data[off] == ':' || d.data[off] == ',') {
		off++
	}
	return off
}

// token turns the token tok, read at offset before, into a node, decoding
// the members or elements of a container.
func (d *decoder) token(tok json.Token, depth int, before int64) (*Node, error) {
	if d.opt.RootObject && depth == 1 && tok != json.Delim('{') {
		d.issues.Add(d.path(), CodeNotObject, "%s", d.opt.Wording.NotObject)
		return nil, errStop
	}
	d.count++
	if d.opt.MaxValues > 0 && d.count > d.opt.MaxValues {
		format := d.opt.Wording.TooLarge
		if format == "" {
			format = "the document holds more than %d JSON values"
		}
		d.issues.Add(d.path(), d.opt.Codes.tooLarge(), format, d.opt.MaxValues)
		return nil, errStop
	}
	_, container := tok.(json.Delim)
	if depth > d.opt.MaxDepth && (container || d.opt.ScalarDepth) {
		if d.opt.Wording.TooDeep != "" {
			d.issues.Add(d.path(), CodeTooDeep, "%s", d.opt.Wording.TooDeep)
		} else {
			d.issues.Add(d.path(), CodeTooDeep, "nesting exceeds the limit of %d levels", d.opt.MaxDepth)
		}
		return nil, errStop
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return d.object(depth)
		}
		return d.array(depth)
	case string:
		d.checkString(before)
	case json.Number:
		d.checkNumber(string(t))
	}
	if !d.kept(depth) {
		return nil, nil
	}
	switch t := tok.(type) {
	case string:
		return &Node{Kind: String, Str: t}, nil
	case json.Number:
		return &Node{Kind: Number, Str: string(t)}, nil
	case bool:
		return &Node{Kind: Bool, Bool: t}, nil
	}
	return &Node{Kind: Null}, nil
}

// kept reports whether values at depth go into the tree (Options.TreeDepth).
func (d *decoder) kept(depth int) bool { return d.opt.TreeDepth <= 0 || depth <= d.opt.TreeDepth }

func (d *decoder) object(depth int) (*Node, error) {
	var n *Node
	if d.kept(depth) {
		n = &Node{Kind: Object}
	}
	seen := map[string]bool{}
	for d.dec.More() {
		before := d.dec.InputOffset()
		tok, err := d.dec.Token()
		if err != nil {
			return nil, d.syntax(err)
		}
		key, _ := tok.(string)
		d.push(step{key: key, isKey: true})
		d.checkString(before)
		if slices.Contains(d.opt.ForbiddenKeys, key) {
			d.issues.Add(d.path(), CodeForbiddenKey, d.opt.Wording.Forbidden, key)
		}
		dup := seen[key]
		switch {
		case dup && d.opt.Wording.DuplicateFormat != "":
			d.issues.Add(d.path(), CodeDuplicateKey, d.opt.Wording.DuplicateFormat, key)
		case dup:
			d.issues.Add(d.path(), CodeDuplicateKey, "%s", d.opt.Wording.duplicate())
		}
		seen[key] = true
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		d.pop()
		if v != nil && (!dup || d.opt.KeepDuplicates) {
			n.Keys = append(n.Keys, key)
			n.Vals = append(n.Vals, v)
		}
	}
	if _, err := d.dec.Token(); err != nil {
		return nil, d.syntax(err)
	}
	return n, nil
}

func (d *decoder) array(depth int) (*Node, error) {
	var n *Node
	if d.kept(depth) {
		n = &Node{Kind: Array}
	}
	for i := 0; d.dec.More(); i++ {
		d.push(step{index: i})
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		d.pop()
		if v != nil {
			n.Elems = append(n.Elems, v)
		}
	}
	if _, err := d.dec.Token(); err != nil {
		return nil, d.syntax(err)
	}
	return n, nil
}

// checkString rejects unpaired surrogate escapes in the string literal just
// read, when Options.Surrogates asks for it.
func (d *decoder) checkString(before int64) {
	if !d.opt.Surrogates {
		return
	}
	lit := d.data[before:d.dec.InputOffset()]
	if q := bytes.IndexByte(lit, '"'); q >= 0 {
		lit = lit[q:]
	}
	if bytes.Contains(lit, []byte(`\u`)) && !validSurrogates(lit) {
		d.issues.Add(d.path(), CodeInvalidString, "string escapes an unpaired UTF-16 surrogate")
	}
}

// checkNumber rejects numbers outside the double range and, with
// Options.ExactNumbers, numbers that RFC 8785 would not write back exactly
// (integers beyond 2^53 among them).
func (d *decoder) checkNumber(lit string) {
	if d.opt.LiteralNumbers {
		return
	}
	f, err := strconv.ParseFloat(lit, 64)
	if !d.opt.ExactNumbers {
		if err != nil || math.IsInf(f, 0) {
			d.issues.Add(d.path(), CodeInvalidValue, "%s", d.opt.Wording.number())
		}
		return
	}
	if err != nil {
		d.issues.Add(d.path(), CodeInexactNumber, "%s", d.opt.Wording.number())
		return
	}
	canon, err := jcs.NumberToJSON(f)
	if err != nil || !sameDecimal(lit, canon) {
		d.issues.Add(d.path(), CodeInexactNumber, "number is not exactly representable; RFC 8785 would write it as %s", canon)
	}
}

// validSurrogates reports whether every surrogate escape in the string
// literal lit is a high surrogate immediately followed by a low one.
func validSurrogates(lit []byte) bool {
	for i := 0; i < len(lit); i++ {
		if lit[i] != '\\' {
			continue
		}
		i++
		if i >= len(lit) || lit[i] != 'u' {
			continue
		}
		r, ok := hex4(lit, i+1)
		if !ok {
			return false
		}
		i += 4
		if !utf16.IsSurrogate(r) {
			continue
		}
		if r >= 0xDC00 || i+6 >= len(lit) || lit[i+1] != '\\' || lit[i+2] != 'u' {
			return false
		}
		lo, ok := hex4(lit, i+3)
		if !ok || lo < 0xDC00 || lo > 0xDFFF {
			return false
		}
		i += 6
	}
	return true
}

func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[at:at+4]), 16, 32)
	return rune(v), err == nil
}

// sameDecimal reports whether two JSON number literals denote the same
// decimal value, without arbitrary-precision arithmetic.
func sameDecimal(a, b string) bool {
	an, ad, ae := decimalParts(a)
	bn, bd, be := decimalParts(b)
	if ad == "" || bd == "" {
		return ad == bd
	}
	return an == bn && ad == bd && ae == be
}

// decimalParts splits a number literal into sign, significant digits
// (without leading or trailing zeros) and the exponent of the last digit.
func decimalParts(s string) (neg bool, digits string, exp int64) {
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	mant, expPart, _ := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	if expPart != "" {
		eneg := expPart[0] == '-'
		expPart = strings.TrimLeft(expPart, "+-")
		const limit = 1 << 40
		for i := 0; i < len(expPart) && exp < limit; i++ {
			exp = exp*10 + int64(expPart[i]-'0')
		}
		if eneg {
			exp = -exp
		}
	}
	exp -= int64(len(frac))
	digits = strings.TrimLeft(intPart+frac, "0")
	trimmed := strings.TrimRight(digits, "0")
	exp += int64(len(digits) - len(trimmed))
	return neg, trimmed, exp
}
