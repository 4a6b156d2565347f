package capture

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

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

// keyPath renders one member step of a JSON path: ".name" for identifiers,
// `["…"]` otherwise, with long keys shortened.
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

// truncate shortens s to at most n bytes on a rune boundary, marking the cut.
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
