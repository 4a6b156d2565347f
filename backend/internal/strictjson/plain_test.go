package strictjson

import (
	"strings"
	"testing"
)

// plainEndSlow is PlainEnd's definition, one byte at a time.
func plainEndSlow(s []byte, i int) int {
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			return i
		}
	}
	return i
}

func TestPlainEnd(t *testing.T) {
	// Every byte value at every position of a word and of the tail, after
	// runs of plain bytes (the borrow of a subtraction crossing into the
	// next byte included).
	for c := 0; c < 256; c++ {
		for at := 0; at < 19; at++ {
			for _, fill := range []byte{' ', '!', '#', '[', ']', '~', 0x7f, 'a'} {
				s := []byte(strings.Repeat(string(fill), 19))
				s[at] = byte(c)
				for from := 0; from <= at; from += 3 {
					want := plainEndSlow(s, from)
					if got := PlainEnd(s, from); got != want {
						t.Fatalf("PlainEnd(%q, %d) = %d, want %d", s, from, got, want)
					}
					if got := PlainEndString(string(s), from); got != want {
						t.Fatalf("PlainEnd(string %q, %d) = %d, want %d", s, from, got, want)
					}
				}
			}
		}
	}
	// Two special bytes in one word: the first is found.
	for _, s := range []string{"ab\x00\"cdefgh", "abcdef\\\x1fgh", "a\x80\xffbcdefgh", "\x1f\x00\x00\x00\x00\x00\x00\x00x"} {
		if got, want := PlainEndString(s, 0), plainEndSlow([]byte(s), 0); got != want {
			t.Errorf("PlainEnd(%q) = %d, want %d", s, got, want)
		}
	}
}

func FuzzPlainEnd(f *testing.F) {
	f.Add([]byte("plain text \x1b[31m\"quoted\"\\ é"), 0)
	f.Add([]byte("0123456789abcdef\x1f"), 3)
	f.Fuzz(func(t *testing.T, s []byte, from int) {
		if from < 0 || from > len(s) {
			return
		}
		if got, want := PlainEnd(s, from), plainEndSlow(s, from); got != want {
			t.Fatalf("PlainEnd(%q, %d) = %d, want %d", s, from, got, want)
		}
	})
}

func BenchmarkPlainEnd(b *testing.B) {
	s := []byte(strings.Repeat("The quick brown fox jumps over the lazy dog; 0123456789", 20000))
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if PlainEnd(s, 0) != len(s) {
			b.Fatal("not plain")
		}
	}
}

func BenchmarkPlainEndSlow(b *testing.B) {
	s := []byte(strings.Repeat("The quick brown fox jumps over the lazy dog; 0123456789", 20000))
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if plainEndSlow(s, 0) != len(s) {
			b.Fatal("not plain")
		}
	}
}
