package strictjson

import (
	"strings"
	"unicode/utf8"
)

// Small lexical checks the strict readers make on decoded values, and the
// one shape rule their writers share; one copy each (they were copied
// into several packages before).

// IsHex64 reports whether s is exactly 64 lowercase hexadecimal
// characters: a SHA-256 digest as every format here writes it.
func IsHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// IsName reports whether s matches ^[A-Za-z0-9][A-Za-z0-9<extra>]{0,max-1}$
// where extra lists the further ASCII bytes allowed after the first.
func IsName(s string, max int, extra string) bool {
	if s == "" || len(s) > max || !IsAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !IsAlnum(s[i]) && strings.IndexByte(extra, s[i]) < 0 {
			return false
		}
	}
	return true
}

// IsAlnum reports whether b is an ASCII letter or digit.
func IsAlnum(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// FirstInvalidUTF8 returns the offset of the first byte of b that does not
// start a valid UTF-8 sequence, or -1 when b is valid UTF-8.
func FirstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

// Article is the indefinite article for a JSON kind name in a message:
// "an" for "array" and "object", "a" otherwise ("a string").
func Article(kind string) string {
	if kind == "array" || kind == "object" {
		return "an"
	}
	return "a"
}

// NonNil returns s, or an empty slice when s is nil, so that it encodes
// as [] and never as null (no format here writes a null list).
func NonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
