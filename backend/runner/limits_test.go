package runner

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/backend/proctree"
)

// controllerEnabled reads, independently of package proctree, whether
// the machine's cgroup v2 enables controller for the per-attempt cgroups
// (the "gatehouse" directory below this process's cgroup).
func controllerEnabled(t *testing.T, controller string) bool {
	t.Helper()
	mount := ""
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for sc := bufio.NewScanner(f); sc.Scan(); {
		pre, post, _ := strings.Cut(sc.Text(), " - ")
		if strings.HasPrefix(post, "cgroup2 ") {
			mount = strings.Fields(pre)[4]
		}
	}
	b, _ := os.ReadFile("/proc/self/cgroup")
	self := ""
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			self = p
		}
	}
	if mount == "" {
		return false
	}
	ctl, _ := os.ReadFile(filepath.Join(mount, self, "gatehouse", "cgroup.subtree_control"))
	for _, w := range strings.Fields(string(ctl)) {
		if w == controller {
			return true
		}
	}
	return false
}

// Every attempt states pids.max and memory.max as they applied, and the
// statement matches the machine: where the controllers are enabled for
// the attempt cgroups a fork bomb stops at pids.max; where they are not
// (this machine's hybrid layout binds pids and memory to cgroup v1) the
// envelope says "not enforced" with the reason; without a cgroup of its
// own (the subreaper mechanism) neither is enforced.
func TestResourceLimitsAreStatedTruthfully(t *testing.T) {
	for _, own := range []string{"", proctree.MechanismSubreaper} {
		r := runnerWith(t, own, confinedOn)
		got, env := probe(t, r, map[string]any{"action": "look"})
		if got != "" {
			t.Fatal(got)
		}
		limits := map[string]proctree.Limit{}
		for _, l := range env.Cleanup.Limits {
			limits[l.Name] = l
		}
		for name, want := range map[string]int64{"pids.max": MaxTasks, "memory.max": MaxMemoryBytes} {
			l, ok := limits[name]
			if !ok || l.Value != want {
				t.Fatalf("%s: %s missing or wrong: %+v", own, name, env.Cleanup.Limits)
			}
			enabled := own == "" && controllerEnabled(t, strings.TrimSuffix(name, ".max"))
			if l.Enforced != enabled || (l.Reason == nil) != enabled {
				t.Errorf("%s: %s stated %+v, the machine's controller enabled: %v", own, name, l, enabled)
			}
			if l.Reason != nil {
				t.Logf("%s: %s", own, *l.Reason)
			}
		}
		if own == "" && limits["pids.max"].Enforced {
			got, env := probe(t, r, map[string]any{"action": "forkbomb", "max": 2 * MaxTasks})
			if !strings.HasPrefix(got, "forked ") || strings.HasSuffix(got, ": none") {
				t.Fatalf("the fork bomb was not stopped: %s", got)
			}
			if !env.Cleanup.Verified {
				t.Fatalf("cleanup after the fork bomb: %+v", env.Cleanup)
			}
			t.Log(got)
		}
	}
}
