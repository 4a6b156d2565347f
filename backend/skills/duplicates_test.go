package skills

import (
	"fmt"
	"strings"
	"testing"
)

// TestNestedDuplicateKeysRejected: a bundle that names a key twice inside
// metadata or inside another host's field is invalid, with the path of the
// duplicate; nothing is silently resolved last-wins.
func TestNestedDuplicateKeysRejected(t *testing.T) {
	cases := []struct{ fm, path string }{
		{"name: s\ndescription: d\nmetadata:\n  author: alice\n  author: mallory\n", "$.metadata.author"},
		{"name: s\ndescription: d\nmetadata: {version: \"1\", version: \"2\"}\n", "$.metadata.version"},
		{"name: s\ndescription: d\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      matcher: Read\n", "$.hooks.PreToolUse[0].matcher"},
		{"name: s\ndescription: d\nx-host:\n  a:\n    b: 1\n    b: 2\n", `$["x-host"].a.b`},
	}
	for _, c := range cases {
		p := parseDocument(doc(c.fm), "s")
		found := false
		for _, e := range p.errors {
			if e.Code == "duplicate_key" && e.Path == c.path {
				found = true
			}
		}
		if !found {
			t.Errorf("%q: errors %v, want duplicate_key at %s", c.fm, p.errors, c.path)
		}
	}
	// Same key in different mappings, and "1" vs 1, are not duplicates.
	p := parseDocument(doc("name: s\ndescription: d\nx:\n  a: {k: 1}\n  b: {k: 2}\n  c: {1: a, \"1\": b}\n"), "s")
	if len(p.errors) > 0 {
		t.Fatalf("false duplicates: %v", p.errors)
	}
}

// flowMapping is a SKILL.md whose frontmatter is one line: a flow mapping
// of unknown fields about size bytes long.
func flowMapping(size int) []byte {
	var b strings.Builder
	b.WriteString("{name: big, description: d")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, ", k%d: v", i)
	}
	b.WriteString("}\n")
	return doc(b.String())
}

// BenchmarkFrontmatterOneLineFlowMapping shows the growth from 50 KB to
// 1 MB; compare ns/op per size (linear: 20x the size, about 20x the time).
// Run: go test -run '^$' -bench FrontmatterOneLine -benchtime 3x ./backend/skills/
func BenchmarkFrontmatterOneLineFlowMapping(b *testing.B) {
	for _, kb := range []int{50, 100, 200, 500, 1000} {
		d := flowMapping(kb * 1000)
		b.Run(fmt.Sprintf("%dKB", kb), func(b *testing.B) {
			b.SetBytes(int64(len(d)))
			for i := 0; i < b.N; i++ {
				if p := parseDocument(d, "big"); len(p.errors) > 0 {
					b.Fatal(p.errors)
				}
			}
		})
	}
}

// TestFrontmatterOneLineFlowMappingLinear guards against a return of the
// quadratic scan without a wall-clock bound: converting the position of
// every key of a one-line flow mapping steps over each rune at most once.
func TestFrontmatterOneLineFlowMappingLinear(t *testing.T) {
	d := flowMapping(200_000)
	p := parseDocument(d, "big")
	if len(p.errors) > 0 || len(p.unknown) < 10_000 {
		t.Fatalf("errors %v, %d unknown fields", p.errors, len(p.unknown))
	}
	for _, u := range p.unknown[:3] { // raw text is the exact source slice
		if !strings.HasPrefix(u.Raw, u.Key+": v") {
			t.Fatalf("raw %q of %s", u.Raw, u.Key)
		}
	}
	line := string(d[4 : len(d)-len("---\n# Body\n")])
	pos := newPositions(line)
	for col := 1; col <= len(line); col += 7 { // ascending, as keys come
		if got := pos.offset(1, col); got != col-1 {
			t.Fatalf("offset(1, %d) = %d", col, got)
		}
	}
	if pos.walked > len(line) {
		t.Fatalf("walked %d runes for a %d-byte line: not linear", pos.walked, len(line))
	}
	// Going back on a line (not done by the parser) still answers right.
	if got := pos.offset(1, 3); got != 2 {
		t.Fatalf("offset(1, 3) after the end = %d", got)
	}
}
