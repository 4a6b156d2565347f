package strictjson

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxPathKey is the longest member name, in bytes, a path step spells out
// in full; a longer one is cut on a rune boundary and marked with "…".
const MaxPathKey = 64

// KeyPath renders one member step of a JSON path in the one syntax every
// Gatehouse parser reports (see the package documentation): ".name" when
// key is an identifier ([A-Za-z_][A-Za-z0-9_]*) of at most MaxPathKey
// bytes, otherwise `["…"]` holding key, shortened past MaxPathKey bytes, as
// a JSON string literal in which every character that is not printable is
// escaped. The result never contains a control, format or separator
// character, so a hostile member name cannot act on the terminal or dialog
// that shows the path.
func KeyPath(key string) string {
	if isPathIdent(key) {
		return "." + key
	}
	return "[" + quotePathKey(Truncate(key, MaxPathKey)) + "]"
}

// IndexPath renders one array step of a JSON path: "[i]".
func IndexPath(i int) string { return "[" + strconv.Itoa(i) + "]" }

// JoinPath appends member step key to path (path + KeyPath(key)).
func JoinPath(path, key string) string { return path + KeyPath(key) }

func isPathIdent(s string) bool {
	if s == "" || len(s) > MaxPathKey {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// quotePathKey writes s as a JSON string literal with every rune that
// strconv.IsPrint rejects (C0 and C1 controls, DEL, bidirectional and
// other format characters, line and paragraph separators) and every
// invalid byte escaped as \uXXXX. Hand-written because neither library
// quoter does both: encoding/json leaves C1 controls and bidi overrides
// live (and HTML-escapes <, > and &), and strconv.Quote writes \x escapes
// that are not JSON.
func quotePathKey(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\ufffd`)
		case strconv.IsPrint(r):
			b.WriteRune(r)
		case r > 0xFFFF:
			r -= 0x10000
			writeU(&b, 0xD800+(r>>10))
			writeU(&b, 0xDC00+(r&0x3FF))
		default:
			writeU(&b, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func writeU(b *strings.Builder, r rune) {
	const hex = "0123456789abcdef"
	b.WriteString(`\u`)
	for shift := 12; shift >= 0; shift -= 4 {
		b.WriteByte(hex[(r>>shift)&0xF])
	}
}

// ParsePath splits a JSON path written in the package's syntax into its
// steps: member names (unescaped) and array indexes as decimal strings,
// with isIndex telling them apart. It reports false for anything else,
// which no Gatehouse parser writes. It is the grammar's reference reader,
// used by the tests that hold every formatter to it.
func ParsePath(path string) (steps []string, isIndex []bool, ok bool) {
	if !strings.HasPrefix(path, "$") {
		return nil, nil, false
	}
	p := path[1:]
	for p != "" {
		switch {
		case p[0] == '.':
			n := 1
			for n < len(p) && (p[n] == '_' || p[n] >= 'a' && p[n] <= 'z' || p[n] >= 'A' && p[n] <= 'Z' || n > 1 && p[n] >= '0' && p[n] <= '9') {
				n++
			}
			if n == 1 {
				return nil, nil, false
			}
			steps, isIndex, p = append(steps, p[1:n]), append(isIndex, false), p[n:]
		case strings.HasPrefix(p, `["`):
			end := closingQuote(p, 2)
			if end < 0 || end+1 >= len(p) || p[end+1] != ']' {
				return nil, nil, false
			}
			var key string
			if err := json.Unmarshal([]byte(p[1:end+1]), &key); err != nil {
				return nil, nil, false
			}
			steps, isIndex, p = append(steps, key), append(isIndex, false), p[end+2:]
		case p[0] == '[':
			n := 1
			for n < len(p) && p[n] >= '0' && p[n] <= '9' {
				n++
			}
			if n == 1 || n >= len(p) || p[n] != ']' || (p[1] == '0' && n > 2) {
				return nil, nil, false
			}
			steps, isIndex, p = append(steps, p[1:n]), append(isIndex, true), p[n+1:]
		default:
			return nil, nil, false
		}
	}
	return steps, isIndex, true
}

// closingQuote returns the index of the quote that ends the string literal
// starting before s[from], or -1.
func closingQuote(s string, from int) int {
	for i := from; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}
