package evidence

import (
	"math/rand/v2"
	"testing"
)

// compactJSONSlow is compactJSON's definition, one byte at a time.
func compactJSONSlow(raw []byte) bool {
	in, esc := false, false
	for _, c := range raw {
		switch {
		case esc:
			esc = false
		case in:
			if c == '\\' {
				esc = true
			} else if c == '"' {
				in = false
			}
		case c == '"':
			in = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			return false
		}
	}
	return true
}

// TestCompactJSON compares compactJSON with its byte-at-a-time
// definition on random texts of JSON's delimiters, whitespace, escapes
// and plain runs longer than a word.
func TestCompactJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 8))
	pieces := []string{`"`, `\`, `\"`, `\\`, " ", "\t", "\n", "\r", "a", "abcdefghijklmnopq", "{", ":", ",", "\x01", "é", "\x80"}
	for i := 0; i < 100000; i++ {
		var b []byte
		for n := r.IntN(12); n > 0; n-- {
			b = append(b, pieces[r.IntN(len(pieces))]...)
		}
		if got, want := compactJSON(b), compactJSONSlow(b); got != want {
			t.Fatalf("compactJSON(%q) = %v, want %v", b, got, want)
		}
	}
}
