package capture

import (
	"math/rand"
	"strings"
	"testing"
)

// TestMaySplitIsConservative: redactSplit's shortcut (maySplit) never
// skips a text that redactSplitAll redacts, on 20,000 texts made of
// pieces of the secrets, escape sequences, CR, LF and other text; and it
// does skip text that shows no split secret.
func TestMaySplitIsConservative(t *testing.T) {
	n := &normalizer{secrets: []string{"s3cretVALUE", "pw", "x"}}
	pieces := []string{"s3c", "ret", "VALUE", "s3cretVALUE", "p", "w", "pw", "x", "\x1b[1m", "\x1b[0m", "\x1b]0;t\x07", "\x1b(B",
		"\r", "\n", "\r\n", "abc", " ", "é", "\x1b", "\x1b["}
	rng := rand.New(rand.NewSource(7))
	redacted := 0
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for k := rng.Intn(12); k >= 0; k-- {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		s := b.String()
		all := n.redactSplitAll(s)
		if got := n.redactSplit(s); got != all {
			t.Fatalf("redactSplit(%q) = %q, redactSplitAll %q", s, got, all)
		}
		if all != s {
			redacted++
		}
	}
	if redacted == 0 {
		t.Fatal("no text showed a split secret: the test checks nothing")
	}
	for _, s := range []string{"plain\r\nlines\r\n", "\x1b[31mred\x1b[0m s3cretVALUE\r\n", strings.Repeat("yes\n", 1000)} {
		if n.maySplit(s) {
			t.Errorf("maySplit(%q) is true", s)
		}
	}
	t.Logf("%d of 20000 texts redacted", redacted)
}

// BenchmarkRedactSplitChunk is what a raw chunk of 1 MB of lines costs
// redactSplit with one secret (the shortcut, maySplit) and without the
// shortcut (redactSplitAll, the copy of the chunk's visible text).
func BenchmarkRedactSplitChunk(b *testing.B) {
	n := &normalizer{secrets: []string{"s3cretVALUE-42"}}
	chunk := strings.Repeat("The quick brown fox jumps over the lazy dog; \x1b[1mpack\x1b[0m my box with five dozen jugs\r\n", 1<<20/88)
	for _, m := range []struct {
		name string
		f    func(string) string
	}{{"shortcut", n.redactSplit}, {"full", n.redactSplitAll}} {
		b.Run(m.name, func(b *testing.B) {
			b.SetBytes(int64(len(chunk)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if m.f(chunk) != chunk {
					b.Fatal("redacted a chunk without the secret")
				}
			}
		})
	}
}
