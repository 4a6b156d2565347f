package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/gowebpki/jcs"
)

// Options bound one decoding and choose its checks and wording.
type Options struct {
	MaxDepth  int // deepest nesting; the root is at depth 1
	MaxValues int // most scalars and containers (not member names); 0 for no limit

	// Surrogates reports string literals escaping an unpaired UTF-16
	// surrogate (CodeInvalidString), which encoding/json would silently
	// turn into U+FFFD.
	Surrogates bool
	// ExactNumbers reports numbers RFC 8785 would not write back exactly
	// (CodeInexactNumber). Otherwise only numbers outside the double range
	// are reported (CodeInvalidValue).
	ExactNumbers bool
	// KeepDuplicates keeps every member of an object in the tree, repeated
	// names included; otherwise only the first one is kept.
	KeepDuplicates bool

	Wording Wording
}

// Wording holds the messages of document-level issues.
type Wording struct {
	// Detailed quotes encoding/json's error in syntax messages; otherwise
	// they name only the byte offset.
	Detailed  bool
	EOF       string // the input ends inside the value
	Trailing  string // format taking the byte offset of data after the value
	Duplicate string // a repeated member name
	Number    string // a number outside the double range
}

// errStop ends decoding: the issue has been recorded.
var errStop = errors.New("stop")

// Decode decodes data, which the caller has checked to be valid UTF-8,
// holding exactly one JSON value followed by nothing but whitespace. It
// records issues at paths below root ("$") and returns nil when the
// document is malformed or exceeds the limits; duplicate member names,
// unpaired surrogates and rejected numbers leave the tree usable.
func Decode(data []byte, root string, opt Options, issues *Collector) *Node {
	d := &decoder{data: data, dec: json.NewDecoder(bytes.NewReader(data)), opt: &opt, issues: issues}
	d.dec.UseNumber()
	n, err := d.value(root, 1)
	if err != nil {
		return nil
	}
	for off := int(d.dec.InputOffset()); off < len(data); off++ {
		if c := data[off]; c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			issues.Add(root, CodeInvalidJSON, opt.Wording.Trailing, off)
			return nil
		}
	}
	return n
}

type decoder struct {
	data   []byte
	dec    *json.Decoder
	opt    *Options
	count  int
	issues *Collector
}

func (d *decoder) syntax(path string, err error) error {
	var se *json.SyntaxError
	detailed := d.opt.Wording.Detailed
	switch {
	case errors.As(err, &se) && detailed:
		d.issues.Add(path, CodeInvalidJSON, "malformed JSON at byte offset %d: %v", se.Offset, se)
	case errors.As(err, &se):
		d.issues.Add(path, CodeInvalidJSON, "malformed JSON at byte offset %d", se.Offset)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		d.issues.Add(path, CodeInvalidJSON, "%s", d.opt.Wording.EOF)
	case detailed:
		d.issues.Add(path, CodeInvalidJSON, "%s", Truncate(err.Error(), 200))
	default:
		d.issues.Add(path, CodeInvalidJSON, "malformed JSON near byte offset %d", d.dec.InputOffset())
	}
	return errStop
}

func (d *decoder) value(path string, depth int) (*Node, error) {
	before := d.dec.InputOffset()
	tok, err := d.dec.Token()
	if err != nil {
		return nil, d.syntax(path, err)
	}
	d.count++
	if d.opt.MaxValues > 0 && d.count > d.opt.MaxValues {
		d.issues.Add(path, CodeTooLarge, "the document holds more than %d JSON values", d.opt.MaxValues)
		return nil, errStop
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth > d.opt.MaxDepth {
			d.issues.Add(path, CodeTooDeep, "nesting exceeds the limit of %d levels", d.opt.MaxDepth)
			return nil, errStop
		}
		if t == '{' {
			return d.object(path, depth)
		}
		return d.array(path, depth)
	case string:
		d.checkString(path, before)
		return &Node{Kind: String, Str: t}, nil
	case json.Number:
		d.checkNumber(path, string(t))
		return &Node{Kind: Number, Str: string(t)}, nil
	case bool:
		return &Node{Kind: Bool, Bool: t}, nil
	}
	return &Node{Kind: Null}, nil
}

func (d *decoder) object(path string, depth int) (*Node, error) {
	n := &Node{Kind: Object}
	seen := map[string]bool{}
	for d.dec.More() {
		before := d.dec.InputOffset()
		tok, err := d.dec.Token()
		if err != nil {
			return nil, d.syntax(path, err)
		}
		key, _ := tok.(string)
		at := path + KeyPath(key)
		d.checkString(at, before)
		dup := seen[key]
		if dup {
			d.issues.Add(at, CodeDuplicateKey, "%s", d.opt.Wording.Duplicate)
		}
		seen[key] = true
		v, err := d.value(at, depth+1)
		if err != nil {
			return nil, err
		}
		if !dup || d.opt.KeepDuplicates {
			n.Keys = append(n.Keys, key)
			n.Vals = append(n.Vals, v)
		}
	}
	if _, err := d.dec.Token(); err != nil {
		return nil, d.syntax(path, err)
	}
	return n, nil
}

func (d *decoder) array(path string, depth int) (*Node, error) {
	n := &Node{Kind: Array}
	for i := 0; d.dec.More(); i++ {
		v, err := d.value(fmt.Sprintf("%s[%d]", path, i), depth+1)
		if err != nil {
			return nil, err
		}
		n.Elems = append(n.Elems, v)
	}
	if _, err := d.dec.Token(); err != nil {
		return nil, d.syntax(path, err)
	}
	return n, nil
}

// checkString rejects unpaired surrogate escapes in the string literal just
// read, when Options.Surrogates asks for it.
func (d *decoder) checkString(path string, before int64) {
	if !d.opt.Surrogates {
		return
	}
	lit := d.data[before:d.dec.InputOffset()]
	if q := bytes.IndexByte(lit, '"'); q >= 0 {
		lit = lit[q:]
	}
	if bytes.Contains(lit, []byte(`\u`)) && !validSurrogates(lit) {
		d.issues.Add(path, CodeInvalidString, "string escapes an unpaired UTF-16 surrogate")
	}
}

// checkNumber rejects numbers outside the double range and, with
// Options.ExactNumbers, numbers that RFC 8785 would not write back exactly
// (integers beyond 2^53 among them).
func (d *decoder) checkNumber(path, lit string) {
	f, err := strconv.ParseFloat(lit, 64)
	if !d.opt.ExactNumbers {
		if err != nil || math.IsInf(f, 0) {
			d.issues.Add(path, CodeInvalidValue, "%s", d.opt.Wording.Number)
		}
		return
	}
	if err != nil {
		d.issues.Add(path, CodeInexactNumber, "%s", d.opt.Wording.Number)
		return
	}
	canon, err := jcs.NumberToJSON(f)
	if err != nil || !sameDecimal(lit, canon) {
		d.issues.Add(path, CodeInexactNumber, "number is not exactly representable; RFC 8785 would write it as %s", canon)
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
