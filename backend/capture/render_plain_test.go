package capture

import (
	"strings"
	"testing"
)

// plainPrefixByBytes is plainPrefix's definition, one byte at a time.
func plainPrefixByBytes(text string) int {
	for i := 0; i < len(text); i++ {
		if !isPlainByte(text[i]) {
			return i
		}
	}
	return len(text)
}

// TestPlainPrefix checks plainPrefix against its definition with every
// byte value at every position of a word and of the tail, and on the
// class's edges (0x1f, 0x20, 0x7e, 0x7f, 0x80, 0xff, LF, CR).
func TestPlainPrefix(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 100} {
		base := strings.Repeat("a", n)
		if got := plainPrefix(base); got != n {
			t.Fatalf("plainPrefix of %d plain bytes = %d", n, got)
		}
		for at := 0; at < n; at++ {
			for c := 0; c < 256; c++ {
				s := base[:at] + string([]byte{byte(c)}) + base[at+1:]
				if got, want := plainPrefix(s), plainPrefixByBytes(s); got != want {
					t.Fatalf("plainPrefix(%q) = %d, want %d", s, got, want)
				}
			}
		}
	}
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"abc\x1b[0m", 3}, {"line\r\nline\n", 11}, {"~~~~~~~~\x7f", 8}, {"        \x1f", 8},
		{"caf\xc3\xa9", 3}, {"\x00", 0}, {"0123456789\t", 10}, {"\n\r\n\r\n\r\n\r\n", 9},
	} {
		if got := plainPrefix(tc.in); got != tc.want {
			t.Errorf("plainPrefix(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// FuzzPlainPrefix holds plainPrefix to its definition on any bytes.
func FuzzPlainPrefix(f *testing.F) {
	for _, s := range []string{"", "plain text\n", "abcdefgh\x1b[31m", "\xff\xfe", "yes\nyes\nyes\n\r", "12345678\x7f12345678"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := plainPrefix(s), plainPrefixByBytes(s); got != want {
			t.Fatalf("plainPrefix(%q) = %d, want %d", s, got, want)
		}
	})
}

// BenchmarkPlainPrefix measures plainPrefix over 32 KiB messages of the
// capture benchmark's plain lines (its cost per output byte in the
// capture).
func BenchmarkPlainPrefix(b *testing.B) {
	text := strings.Repeat(strings.SplitN(benchCommand, "'", 3)[1]+"\n", writeMessage/100+1)[:writeMessage]
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if plainPrefix(text) != len(text) {
			b.Fatal("not plain")
		}
	}
}
