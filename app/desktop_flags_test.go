package app

import (
	"bytes"
	"strings"
	"testing"
)

func TestSecondLaunchView(t *testing.T) {
	var errb bytes.Buffer
	io := IO{Stdout: &bytes.Buffer{}, Stderr: &errb, Getenv: func(string) string { return "" }}
	cases := []struct {
		args []string
		view string
	}{
		{[]string{"desktop", "--view", "runs"}, "runs"},
		{[]string{"--view=security"}, "security"},
		{[]string{}, ""},
		{[]string{"desktop", "--view", `runs"; alert(1); "`}, ""}, // only known names reach the window's script
		{[]string{"desktop", "--bogus"}, ""},
	}
	for _, c := range cases {
		if got := secondLaunch(io, c.args).View; got != c.view {
			t.Errorf("secondLaunch(%q).View = %q, want %q", c.args, got, c.view)
		}
	}
	if !strings.Contains(errb.String(), "ignoring the second launch's arguments") {
		t.Errorf("an unreadable second launch is not reported: %q", errb.String())
	}
}
