package strictjson

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestKeyPathSyntax(t *testing.T) {
	long := strings.Repeat("a", MaxPathKey+1)
	for key, want := range map[string]string{
		"mode":            ".mode",
		"_x9":             "._x9",
		"x-y":             `["x-y"]`,
		"$ref":            `["$ref"]`,
		"9lives":          `["9lives"]`,
		"":                `[""]`,
		"odd key":         `["odd key"]`,
		`q"\`:             `["q\"\\"]`,
		"<a&b>":           `["<a&b>"]`,
		"é":               `["é"]`,
		"\x1b[2J":         `["\u001b[2J"]`,
		"\u009b31m":       `["\u009b31m"]`,
		"a\u202eb":        `["a\u202eb"]`,
		"l\u2028s":        `["l\u2028s"]`,
		"\n\t\r\x7f":      `["\n\t\r\u007f"]`,
		"\xff":            `["\ufffd"]`,
		"\U000E0001":      `["\udb40\udc01"]`,
		long:              `["` + long[:MaxPathKey] + `…"]`,
		long[:MaxPathKey]: "." + long[:MaxPathKey],
	} {
		if got := KeyPath(key); got != want {
			t.Errorf("KeyPath(%q) = %s, want %s", key, got, want)
		}
	}
	if got := JoinPath("$.a", "b-c") + IndexPath(3); got != `$.a["b-c"][3]` {
		t.Errorf("JoinPath/IndexPath = %s", got)
	}
}

// TestKeyPathRoundTrip holds the formatter to the grammar's reader: every
// short valid name comes back unchanged and no path step carries a
// character that is not printable.
func TestKeyPathRoundTrip(t *testing.T) {
	for _, key := range []string{"a", "a b", "x-y", `"`, `\`, "\x00", "\u0085", "😀", "\U000E0001", "\u202e", "[0]", `"]`, "."} {
		checkRoundTrip(t, key)
	}
}

func checkRoundTrip(t *testing.T, key string) {
	t.Helper()
	step := KeyPath(key)
	for _, r := range step {
		if !unicode.IsPrint(r) && r != ' ' {
			t.Fatalf("KeyPath(%q) = %q carries %U", key, step, r)
		}
	}
	steps, idx, ok := ParsePath("$" + step + "[7]")
	if !ok || len(steps) != 2 || idx[0] || !idx[1] || steps[1] != "7" {
		t.Fatalf("ParsePath(%q) = %q %v %v", "$"+step+"[7]", steps, idx, ok)
	}
	if utf8.ValidString(key) && len(key) <= MaxPathKey && steps[0] != key {
		t.Fatalf("KeyPath(%q) = %s reads back as %q", key, step, steps[0])
	}
}

func TestParsePathRejects(t *testing.T) {
	for _, p := range []string{"", "mode", "/trusted/0", "$.", "$[", "$[01]", "$[-1]", "$[x]", `$["a"`, `$["\x"]`, "$.a-b", "$..a", `$["a\u0000"`} {
		if steps, _, ok := ParsePath(p); ok {
			t.Errorf("ParsePath(%q) accepted %q", p, steps)
		}
	}
	steps, idx, ok := ParsePath(`$.trusted[0]["odd key"].x`)
	if !ok || !slices.Equal(steps, []string{"trusted", "0", "odd key", "x"}) || !slices.Equal(idx, []bool{false, true, false, false}) {
		t.Fatalf("ParsePath = %q %v %v", steps, idx, ok)
	}
}

func FuzzKeyPath(f *testing.F) {
	for _, s := range []string{"a", "x-y", "\x1b]0;t\x07", "\u009b", "\xed\xa0\x80", strings.Repeat("é", 40)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) { checkRoundTrip(t, key) })
}
