package strictjson

import (
	"strings"
	"testing"
)

func TestLexicalChecks(t *testing.T) {
	hex := strings.Repeat("0123456789abcdef", 4)
	for s, want := range map[string]bool{hex: true, hex[:63]: false, hex + "0": false, strings.ToUpper(hex): false, hex[:63] + "g": false, "": false} {
		if IsHex64(s) != want {
			t.Errorf("IsHex64(%q) = %v", s, !want)
		}
	}
	for _, c := range []struct {
		s     string
		max   int
		extra string
		want  bool
	}{
		{"a", 64, "._-", true}, {"a.b_c-d", 64, "._-", true}, {".a", 64, "._-", false}, {"a.b", 64, "_-", false},
		{"", 64, "._-", false}, {strings.Repeat("a", 64), 64, "", true}, {strings.Repeat("a", 65), 64, "", false}, {"é", 64, "", false},
	} {
		if IsName(c.s, c.max, c.extra) != c.want {
			t.Errorf("IsName(%q, %d, %q) = %v", c.s, c.max, c.extra, !c.want)
		}
	}
	for s, want := range map[string]int{"": -1, "héllo": -1, "ab\xffc": 2, "\xc3": 0, "ok\xed\xa0\x80": 2} {
		if got := FirstInvalidUTF8([]byte(s)); got != want {
			t.Errorf("FirstInvalidUTF8(%q) = %d, want %d", s, got, want)
		}
	}
	if Article("object") != "an" || Article("array") != "an" || Article("string") != "a" {
		t.Error("Article")
	}
	if s := NonNil([]int(nil)); s == nil || len(s) != 0 {
		t.Errorf("NonNil(nil) = %#v", s)
	}
	if s := []int{1}; &NonNil(s)[0] != &s[0] {
		t.Error("NonNil copied a non-nil slice")
	}
}
