package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/backend/confine"
	"github.com/gatehouse/gatehouse/backend/proctree"
)

// runnerWith returns a runner over the test supervisor with the ownership
// mechanism capped and the given default confinement.
func runnerWith(t testing.TB, ownership string, c confine.Settings) *Runner {
	t.Helper()
	r, err := New(Config{Supervisor: testSup, RunsDir: testRunsDir, Journal: testJournal, History: testDB, Ownership: ownership, Confinement: c})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var (
	confinedOn  = confine.Settings{Filesystem: confine.FilesystemWorkspace, Network: confine.NetworkDeny}
	confinedOff = confine.Settings{Filesystem: confine.FilesystemOff, Network: confine.NetworkAllow}
)

func cgroupMountAndSelf(t testing.TB) (mount, self string) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, _ := strings.Cut(sc.Text(), " - ")
		if fs := strings.Fields(pre); strings.HasPrefix(post, "cgroup2 ") && len(fs) >= 5 {
			mount = fs[4]
		}
	}
	b, _ := os.ReadFile("/proc/self/cgroup")
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			self = filepath.Join(mount, p)
		}
	}
	return mount, self
}

// The hostile escape suite as real Node skill scripts, under every
// ownership mechanism this machine can produce (each forced), with
// confinement off (so the escapes really happen: the escapee moves itself
// into the root or the app's cgroup, or a child cgroup, with an empty
// environment in a new session) and on (Landlock denies the cgroupfs
// write). Survivors are looked for in /proc by their marker; the envelope
// must name the forced mechanism and be verified.
func TestHostileEscapesUnderEachMechanism(t *testing.T) {
	mount, self := cgroupMountAndSelf(t)
	if mount == "" {
		t.Skip("no cgroup v2 mount")
	}
	cases := []struct {
		name, mode, procs string
		status            Status
	}{
		{"into the root cgroup", "cgroup", filepath.Join(mount, "cgroup.procs"), StatusSucceeded},
		{"into the app's cgroup", "cgroup", filepath.Join(self, "cgroup.procs"), StatusSucceeded},
		{"child cgroup", "child-cgroup", "", StatusSucceeded},
		{"child subreaper", "subreaper", "", StatusSucceeded},
		{"outlives the timeout", "outlive", filepath.Join(mount, "cgroup.procs"), StatusTimeout},
	}
	_, roomy := testBundle(t, "hostile.mjs", map[string]any{"timeoutMs": 20000})
	_, quick := testBundle(t, "hostile.mjs", map[string]any{"timeoutMs": 1500})
	for _, mech := range []string{proctree.MechanismPIDNamespace, proctree.MechanismCgroup, proctree.MechanismSubreaper} {
		ownership := mech
		if mech == proctree.MechanismPIDNamespace {
			ownership = ""
		}
		for _, conf := range []confine.Settings{confinedOff, confinedOn} {
			r := runnerWith(t, ownership, conf)
			if got, _ := r.Ownership(); got != mech {
				t.Logf("%s: unavailable here (strongest: %s)", mech, got)
				continue
			}
			for _, c := range cases {
				name := fmt.Sprintf("%s/%s/%s", mech, conf.Filesystem, strings.ReplaceAll(c.name, " ", "_"))
				t.Run(name, func(t *testing.T) {
					ex := roomy
					if c.status == StatusTimeout {
						ex = quick
					}
					marker := fmt.Sprintf("gatehouse-hostile-%d", time.Now().UnixNano())
					in, _ := json.Marshal(map[string]any{"mode": c.mode, "marker": marker, "cgroupProcs": c.procs, "mount": mount})
					res := r.Run(context.Background(), request(t, ex, string(in)))
					wantStatus(t, res, c.status, "")
					cl := res.Envelope.Cleanup
					if cl == nil || !cl.Verified || cl.Mechanism != mech || cl.Reason != nil {
						t.Fatalf("cleanup %+v", cl)
					}
					if left := leftovers(marker); len(left) > 0 {
						t.Fatalf("processes of the attempt survived: %v", left)
					}
					if c.status != StatusSucceeded {
						return
					}
					var out struct{ Echo string }
					json.Unmarshal(res.Envelope.Output, &out)
					// The escape was real where nothing forbade it, and
					// Landlock forbade the cgroupfs write where it is on.
					want := map[string]string{"cgroup": "moved", "child-cgroup": "moved", "subreaper": "subreaper"}[c.mode]
					if conf == confinedOn && c.mode != "subreaper" {
						want = "EACCES"
					}
					if mech == proctree.MechanismSubreaper && c.mode == "child-cgroup" && conf == confinedOff && out.Echo == "EACCES" {
						// Without a cgroup of its own the tree sits in the
						// app's (here the root) cgroup, where the kernel
						// does not let it make a child cgroup at all.
						want = "EACCES"
					}
					if out.Echo != want {
						t.Fatalf("escape attempt: %q, want %q", out.Echo, want)
					}
				})
			}
		}
	}
}
