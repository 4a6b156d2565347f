package app

import (
	"bytes"
	"strings"
	"testing"
)

// The commands that take flags only refuse a positional argument with the
// usage error naming the command, before they open anything.
func TestFlagsOnlyCommandsRefusePositionalArguments(t *testing.T) {
	t.Setenv("GATEHOUSE_DATA_DIR", t.TempDir())
	for _, args := range [][]string{
		{"doctor", "extra"},
		{"runs", "--json", "extra"},
		{"serve", "extra"},
		{"skill", "list", "extra"},
		{"evidence", "list", "extra"},
	} {
		var stdout, stderr bytes.Buffer
		status := Main(append([]string{"gatehouse"}, args...), strings.NewReader(""), &stdout, &stderr)
		name := strings.Join(args[:len(args)-1], " ")
		name = strings.TrimSuffix(name, " --json")
		if status != 2 || !strings.Contains(stderr.String(), name+" takes no arguments") {
			t.Errorf("%q: status %d, stderr %q", args, status, stderr.String())
		}
	}
}
