package strictjson

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// fastMin is the size from which Decode first tries decodeFast.
const fastMin = 64 << 10

// Why a second decoder: the token decoder (encoding/json's Decoder.Token)
// allocates every string and number it reads and finds paths for issues,
// which makes a 10 MB Evidence envelope cost ~150 ms. decodeFast reads
// the bytes directly and only accepts: the moment anything is not plainly
// valid — a syntax error, a limit reached, a duplicate or forbidden name,
// a surrogate escape or number Options reject — it gives up and Decode
// runs the token decoder, which reports it at its path. So every issue
// still comes from one place, and a document decodeFast accepts is one
// the token decoder accepts with no issue and the same tree
// (TestDecodeFastIsDecode, FuzzDecodeFast).
type fastDecoder struct {
	data  []byte
	opt   *Options
	i     int
	count int
}

// decodeFast is Decode of data when data breaks no rule of opt; ok is
// false (and the tree nil) whenever Decode might record an issue.
func decodeFast(data []byte, opt *Options) (n *Node, ok bool) {
	f := &fastDecoder{data: data, opt: opt}
	f.ws()
	if opt.RootObject && (f.i >= len(data) || data[f.i] != '{') {
		return nil, false
	}
	n, ok = f.value(1)
	if !ok {
		return nil, false
	}
	if f.ws(); f.i != len(data) {
		return nil, false
	}
	return n, true
}

func (f *fastDecoder) ws() {
	for f.i < len(f.data) && isSpace(f.data[f.i]) {
		f.i++
	}
}

func (f *fastDecoder) kept(depth int) bool { return f.opt.TreeDepth <= 0 || depth <= f.opt.TreeDepth }

// value reads the value at f.i (whitespace skipped), at depth.
func (f *fastDecoder) value(depth int) (*Node, bool) {
	if f.i >= len(f.data) {
		return nil, false
	}
	f.count++
	if f.opt.MaxValues > 0 && f.count > f.opt.MaxValues {
		return nil, false
	}
	c := f.data[f.i]
	container := c == '{' || c == '['
	if depth > f.opt.MaxDepth && (container || f.opt.ScalarDepth) {
		return nil, false
	}
	start := f.i
	var n *Node
	ok := true
	switch {
	case c == '{':
		n, ok = f.object(depth)
	case c == '[':
		n, ok = f.array(depth)
	case c == '"':
		var lit []byte
		if lit, ok = f.str(); ok && f.kept(depth) {
			var s string
			if s, ok = decodeString(lit); ok {
				n = &Node{Kind: String, Str: s}
			}
		}
	case c == 't' || c == 'f' || c == 'n':
		for _, w := range [...]string{"true", "false", "null"} {
			if len(f.data)-f.i >= len(w) && string(f.data[f.i:f.i+len(w)]) == w {
				f.i += len(w)
				if f.kept(depth) {
					n = &Node{Kind: Null}
					if w != "null" {
						n = &Node{Kind: Bool, Bool: w == "true"}
					}
				}
				return f.place(n, start), f.delimited()
			}
		}
		return nil, false
	default:
		var lit string
		if lit, ok = f.number(); ok && f.kept(depth) {
			n = &Node{Kind: Number, Str: lit}
		}
	}
	if !ok {
		return nil, false
	}
	return f.place(n, start), true
}

func (f *fastDecoder) place(n *Node, start int) *Node {
	if n != nil {
		n.Off, n.End = start, f.i
	}
	return n
}

// delimited reports whether a literal or number ends where JSON ends it.
func (f *fastDecoder) delimited() bool {
	if f.i >= len(f.data) {
		return true
	}
	switch f.data[f.i] {
	case ' ', '\t', '\n', '\r', ',', ']', '}':
		return true
	}
	return false
}

func (f *fastDecoder) object(depth int) (*Node, bool) {
	var n *Node
	if f.kept(depth) {
		n = &Node{Kind: Object}
	}
	f.i++ // '{'
	f.ws()
	if f.i < len(f.data) && f.data[f.i] == '}' {
		f.i++
		return n, true
	}
	var names []string       // the names so far, for a small object
	var seen map[string]bool // and for a large one, so no object is quadratic
	for {
		if f.i >= len(f.data) || f.data[f.i] != '"' {
			return nil, false
		}
		lit, ok := f.str()
		if !ok {
			return nil, false
		}
		key, ok := decodeString(lit)
		if !ok || slices.Contains(f.opt.ForbiddenKeys, key) {
			return nil, false
		}
		if seen != nil {
			if seen[key] {
				return nil, false
			}
			seen[key] = true
		} else if slices.Contains(names, key) {
			return nil, false
		} else if names = append(names, key); len(names) > 16 {
			seen = make(map[string]bool, 2*len(names))
			for _, k := range names {
				seen[k] = true
			}
		}
		if f.ws(); f.i >= len(f.data) || f.data[f.i] != ':' {
			return nil, false
		}
		f.i++
		f.ws()
		v, ok := f.value(depth + 1)
		if !ok {
			return nil, false
		}
		if v != nil {
			n.Keys, n.Vals = append(n.Keys, key), append(n.Vals, v)
		}
		if f.ws(); f.i >= len(f.data) {
			return nil, false
		}
		switch f.data[f.i] {
		case ',':
			f.i++
			f.ws()
		case '}':
			f.i++
			return n, true
		default:
			return nil, false
		}
	}
}

func (f *fastDecoder) array(depth int) (*Node, bool) {
	var n *Node
	if f.kept(depth) {
		n = &Node{Kind: Array}
	}
	f.i++ // '['
	f.ws()
	if f.i < len(f.data) && f.data[f.i] == ']' {
		f.i++
		return n, true
	}
	for {
		v, ok := f.value(depth + 1)
		if !ok {
			return nil, false
		}
		if v != nil {
			n.Elems = append(n.Elems, v)
		}
		if f.ws(); f.i >= len(f.data) {
			return nil, false
		}
		switch f.data[f.i] {
		case ',':
			f.i++
			f.ws()
		case ']':
			f.i++
			return n, true
		default:
			return nil, false
		}
	}
}

// str reads the string literal at f.i: no control characters, only
// JSON's escapes, and (with Options.Surrogates) no unpaired surrogate:
// a high surrogate escape must be followed at once by a low one, as
// validSurrogates checks a literal, here in the same pass. The runs of
// plain bytes between escapes are skipped eight at a time (PlainEnd).
func (f *fastDecoder) str() ([]byte, bool) {
	start, d := f.i, f.data
	for j := f.i + 1; ; j++ {
		j = PlainEnd(d, j)
		if j >= len(d) {
			return nil, false
		}
		switch c := d[j]; {
		case c == '"':
			f.i = j + 1
			return d[start:f.i], true
		case c < 0x20:
			return nil, false
		case c == '\\':
			j++
			if j >= len(d) {
				return nil, false
			}
			switch d[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				r, ok := hexAt(d, j+1)
				if !ok {
					return nil, false
				}
				j += 4
				if !f.opt.Surrogates || !utf16.IsSurrogate(r) {
					continue
				}
				if r >= 0xDC00 || j+6 >= len(d) || d[j+1] != '\\' || d[j+2] != 'u' {
					return nil, false
				}
				if lo, ok := hexAt(d, j+3); !ok || lo < 0xDC00 || lo > 0xDFFF {
					return nil, false
				}
				j += 6
			default:
				return nil, false
			}
		}
		// c >= 0x80: UTF-8, checked by the caller before decoding.
	}
}

// hexAt is the value of the four hexadecimal digits at b[at:at+4].
func hexAt(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	var v rune
	for _, h := range b[at : at+4] {
		switch {
		case '0' <= h && h <= '9':
			v = v<<4 | rune(h-'0')
		case 'a' <= h && h <= 'f':
			v = v<<4 | rune(h-'a'+10)
		case 'A' <= h && h <= 'F':
			v = v<<4 | rune(h-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// decodeString is the string a literal decodes to, as encoding/json
// decodes it; a printable ASCII literal without escapes is its own.
func decodeString(lit []byte) (string, bool) {
	body := lit[1 : len(lit)-1]
	for _, c := range body {
		if c == '\\' || c >= utf8.RuneSelf {
			var s string
			return s, json.Unmarshal(lit, &s) == nil
		}
	}
	return string(body), true
}

// number reads the number literal at f.i (JSON's grammar) and checks it
// as the token decoder's checkNumber does.
func (f *fastDecoder) number() (string, bool) {
	d, start := f.data, f.i
	i := f.i
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
	default:
		return "", false
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return "", false
		}
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return "", false
		}
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
	}
	f.i = i
	if !f.delimited() {
		return "", false
	}
	lit := string(d[start:i])
	return lit, numberAccepted(lit, f.opt)
}

// numberAccepted reports whether checkNumber records no issue for lit.
func numberAccepted(lit string, opt *Options) bool {
	if opt.LiteralNumbers {
		return true
	}
	v, err := strconv.ParseFloat(lit, 64)
	if !opt.ExactNumbers {
		return err == nil && !math.IsInf(v, 0)
	}
	if err != nil {
		return false
	}
	canon, err := jcs.NumberToJSON(v)
	return err == nil && sameDecimal(lit, canon)
}
