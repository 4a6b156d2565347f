package policy

import (
	"os"
	"regexp"
	"strconv"
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
