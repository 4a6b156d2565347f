package policy

import (
	"errors"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The Security form hints at the ceilings' bounds while typing, from a
// mirror of this package's constants in frontend/src/lib/policy.ts; the
// mirror must stay equal (the server still decides on every Save).
func TestFrontendMirrorsBounds(t *testing.T) {
	src, err := os.ReadFile("../../frontend/src/lib/policy.ts")
	if err != nil {
		t.Fatal(err)
	}
	for field, want := range map[string][2]int{
		"timeoutMsCeiling":      {minTimeoutMs, maxTimeoutMs},
		"maxOutputBytesCeiling": {minOutputBytes, maxOutputBytes},
	} {
		m := regexp.MustCompile(field + `: \{ min: (\d+), max: (\d+)`).FindSubmatch(src)
		if m == nil {
			t.Fatalf("no bounds for %s in frontend/src/lib/policy.ts", field)
		}
		lo, _ := strconv.Atoi(string(m[1]))
		hi, _ := strconv.Atoi(string(m[2]))
		if lo != want[0] || hi != want[1] {
			t.Errorf("%s: the frontend says %d-%d, the server %d-%d", field, lo, hi, want[0], want[1])
		}
	}
}

// The Security form's workspace and revision hints (frontend/src/lib/policy.ts,
// workspaceHint and revisionHint) are tested with these same vectors in
// policy.test.ts; here the server answers them the same way.
func TestFrontendHintVectors(t *testing.T) {
	rev := "sha256:" + strings.Repeat("a", 64)
	scope := func(rev, ws string) []byte {
		return policyJSON("ask", scopeJSON(rev, "local", ws, 5000, 100, ""))
	}
	has := func(doc []byte, path string) bool {
		_, err := ParseExecution(doc)
		var ve *ValidationError
		if !errors.As(err, &ve) {
			return false
		}
		for _, f := range ve.Fields {
			if f.Path == path {
				return true
			}
		}
		return false
	}
	for _, ok := range []string{"/", "/w", "/home/a b/c", "/a/.hidden", "/a/..b"} {
		if has(scope(rev, ok), "$.trusted[0].workspace") {
			t.Errorf("workspace %q refused; the form says it is fine", ok)
		}
	}
	for _, bad := range []string{"w", "./w", "/a/", "/a//b", "/a/./b", "/a/../b", "/..", "/a/.", "//"} {
		if !has(scope(rev, bad), "$.trusted[0].workspace") {
			t.Errorf("workspace %q accepted; the form hints it is not", bad)
		}
	}
	for _, bad := range []string{"sha256:" + strings.Repeat("a", 63), "sha256:" + strings.Repeat("A", 64)} {
		if !has(scope(bad, "/w"), "$.trusted[0].revision") {
			t.Errorf("revision %q accepted; the form hints it is not", bad)
		}
	}
}
