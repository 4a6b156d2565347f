package capture

import (
	"context"
	"strings"
	"testing"
)

// docs/process-ownership.md: "say in limitations exactly which mechanism was used, and
// keep the residual unknown only when sampling was the only one".
func TestOwnershipMechanismIsStated(t *testing.T) {
	sc, opts := shScenario(t, "true", nil)
	sup := newSupervisor(t)
	rec, err := Capture(context.Background(), sup, sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	var stated []string
	for _, l := range rec.Limitations {
		if strings.HasPrefix(l, "process ownership: ") {
			stated = append(stated, l)
		}
	}
	mech := sup.Mechanism()
	want := map[string]string{"cgroup": "cgroup v2", "subreaper": "child subreaper"}[mech]
	if want == "" {
		want = "scans of /proc only"
	}
	if len(stated) != 1 || !strings.Contains(stated[0], want) {
		t.Fatalf("mechanism %s: ownership limitations %q", mech, stated)
	}
	residual := 0
	for _, u := range rec.ResidualUnknowns {
		if u.Scope == "process" {
			residual++
		}
	}
	if sampledOnly := mech != "cgroup" && mech != "subreaper"; (residual == 1) != sampledOnly || residual > 1 {
		t.Fatalf("mechanism %s: %d process residual unknowns", mech, residual)
	}
	t.Logf("mechanism %s: %s", mech, stated[0])
}
