package proctree

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Limits are the resource limits a tree's cgroup is given before its root
// starts (zero: none asked for).
type Limits struct {
	// Pids is pids.max: the most tasks (processes and threads) the tree
	// may have at once.
	Pids int
	// MemoryBytes is memory.max: the most memory the tree may use.
	MemoryBytes int64
}

// Limit is one resource limit of a tree as it was applied: enforced by
// the kernel, or not with the reason.
type Limit struct {
	// Name is the cgroup file: "pids.max" or "memory.max".
	Name  string `json:"name"`
	Value int64  `json:"value"`
	// Enforced is true only when the value was written to the tree's own
	// cgroup with its controller enabled there.
	Enforced bool    `json:"enforced"`
	Reason   *string `json:"reason"`
}

// limitControllers are the cgroup v2 controllers behind Limits.
var limitControllers = []struct{ controller, file string }{{"pids", "pids.max"}, {"memory", "memory.max"}}

// enableControllers enables the pids and memory controllers for the
// children of parent (the per-tree cgroups), first in parent's own parent
// (this process's cgroup) where they are not yet available to it. It
// returns, per controller, why it cannot be used (absent: it can).
// A controller bound to a cgroup v1 hierarchy (a hybrid layout) is not in
// cgroup v2 at all; a non-root cgroup that holds processes cannot enable
// one for its children (the kernel's "no internal processes" rule).
func enableControllers(parent string) map[string]error {
	why := map[string]error{}
	self := filepath.Dir(parent)
	for _, c := range limitControllers {
		if !listed(filepath.Join(parent, "cgroup.controllers"), c.controller) {
			if !listed(filepath.Join(self, "cgroup.controllers"), c.controller) {
				why[c.controller] = fmt.Errorf("the %s controller is not available in cgroup v2 at %s (its cgroup.controllers: %q)", c.controller, self, read(filepath.Join(self, "cgroup.controllers")))
				continue
			}
			if err := os.WriteFile(filepath.Join(self, "cgroup.subtree_control"), []byte("+"+c.controller), 0); err != nil {
				why[c.controller] = fmt.Errorf("the %s controller cannot be enabled below %s: %w", c.controller, self, err)
				continue
			}
		}
		if err := os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte("+"+c.controller), 0); err != nil {
			why[c.controller] = fmt.Errorf("the %s controller cannot be enabled below %s: %w", c.controller, parent, err)
		}
	}
	return why
}

// applyLimits writes lim into the cgroup at dir (before anything runs in
// it) and states each limit as applied.
func applyLimits(dir string, lim Limits, unavailable map[string]error) []Limit {
	var out []Limit
	for _, c := range limitControllers {
		v := int64(lim.Pids)
		if c.file == "memory.max" {
			v = lim.MemoryBytes
		}
		if v <= 0 {
			continue
		}
		l := Limit{Name: c.file, Value: v}
		err := unavailable[c.controller]
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, c.file), []byte(strconv.FormatInt(v, 10)), 0)
		}
		if err == nil {
			if got := read(filepath.Join(dir, c.file)); got != strconv.FormatInt(v, 10) {
				err = fmt.Errorf("%s reads %q after writing %d", c.file, got, v)
			}
		}
		if err != nil {
			r := c.file + " is not enforced: " + err.Error()
			l.Reason = &r
		} else {
			l.Enforced = true
		}
		out = append(out, l)
	}
	return out
}

func read(path string) string {
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
}

func listed(path, word string) bool {
	for _, w := range strings.Fields(read(path)) {
		if w == word {
			return true
		}
	}
	return false
}
