package capture

import (
	"reflect"
	"sort"
	"strings"
	"testing"
)

// docs/formats/capture-scenario.md: inherit_environment is "copied from Gatehouse's
// environment if allowed by policy", and the target gets "a fresh HOME,
// TERM=xterm-256color, only allowed environment". The target is
// /usr/bin/env itself (no shell adding variables); the test pins the
// exact set of names, the inherited value, and that an inherited name
// Gatehouse does not have is stated in limitations.
func TestTargetEnvironmentIsExactlyTheAllowedOne(t *testing.T) {
	sc, opts := shScenario(t, "", func(m obj) {
		m["executable"], m["arguments"] = "/usr/bin/env", []any{}
		m["inherit_environment"] = []any{"INHERITED", "UNSET_NAME"}
	})
	opts.Policy.AllowedEnv = append(opts.Policy.AllowedEnv, "INHERITED", "UNSET_NAME")
	gatehouseEnv := map[string]string{"INHERITED": "from-gatehouse", "NOT_LISTED": "must-not-leak", "PATH": "/gatehouse/path"}
	opts.LookupEnv = func(n string) (string, bool) { v, ok := gatehouseEnv[n]; return v, ok }
	rec := capture(t, sc, opts)
	got := map[string]string{}
	for _, line := range strings.Split(strings.ReplaceAll(output(rec), "\r\n", "\n"), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			got[k] = v
		}
	}
	var names []string
	for k := range got {
		names = append(names, k)
	}
	sort.Strings(names)
	if want := []string{"GATEHOUSE_PROCESS_RUN_ID", "HOME", "INHERITED", "PATH", "TERM"}; !reflect.DeepEqual(names, want) {
		t.Errorf("target environment names %v, want %v (output %q)", names, want, output(rec))
	}
	if got["INHERITED"] != "from-gatehouse" || got["PATH"] != "/usr/bin:/bin" || got["TERM"] != "xterm-256color" {
		t.Errorf("target environment %v", got)
	}
	found := false
	for _, l := range rec.Limitations {
		found = found || strings.Contains(l, "UNSET_NAME")
	}
	if !found {
		t.Errorf("limitations %v do not name the unset inherited variable", rec.Limitations)
	}
}
