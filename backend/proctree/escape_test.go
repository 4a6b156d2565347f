package proctree

import (
	"fmt"

	"golang.org/x/sys/unix"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// mechanisms are the ways a tree can be owned on this machine, each forced
// in turn: its own PID namespace, its own cgroup (plus the subreaper
// ancestry), and the subreaper ancestry alone.
var mechanisms = []struct {
	name string
	spec func(*Spec)
}{
	{MechanismPIDNamespace, func(s *Spec) { s.PIDNamespace = true }},
	{MechanismCgroup, func(s *Spec) {}},
	{MechanismSubreaper, func(s *Spec) { s.NoCgroup = true }},
}

// escapes are the escape suite of the runner contract, as shell scripts.
// Every process meant to survive carries the marker argument ($1) on its
// command line; the test finds survivors from /proc by it and nothing
// else. $2 is the cgroup v2 mount, $3 this process's cgroup directory.
// (An inner "sh -c script a b" sees a as $0 and b as $1.) An escapee whose
// escape fails exits at once, so the test's wait for it fails.
var escapes = map[string]string{
	"double fork":       `(sh -c 'while :; do sleep 1; done' "$1" &) ; exit 0`,
	"setsid":            `setsid sh -c 'while :; do sleep 1; done' "$1" & exit 0`,
	"new process group": `set -m; sh -c 'while :; do sleep 1; done' "$1" & exit 0`,
	"ignores SIGTERM":   `(trap '' TERM; sh -c 'trap "" TERM; while :; do sleep 1; done' "$1") & exit 0`,
	"holds stdout":      `(exec sh -c 'while :; do sleep 1; done' "$1") & exit 0`,
	"fork loop":         `i=0; while [ $i -lt 30 ]; do sh -c 'while :; do sleep 1; done' "$1" & i=$((i+1)); done; exit 0`,
	"empty environment": `(setsid env -i /bin/sh -c 'while :; do /bin/sleep 1; done' "$1" &) ; exit 0`,
	// The hostile combination of the issue: double fork, new session,
	// empty environment, and the process writes itself into the root
	// cgroup and into this (the app's) cgroup.
	"into the root cgroup":  `(setsid env -i /bin/sh -c 'echo $$ > "$1/cgroup.procs" || exit 9; while :; do /bin/sleep 1; done' "$1" "$2" &) ; exit 0`,
	"into the app's cgroup": `(setsid env -i /bin/sh -c 'echo $$ > "$1/cgroup.procs" || exit 9; while :; do /bin/sleep 1; done' "$1" "$3" &) ; exit 0`,
	// A child that makes itself a subreaper, then double-forks below it.
	"child subreaper": `(setsid env -i python3 -c 'import ctypes,os,sys,time
ctypes.CDLL(None).prctl(36,1,0,0,0)
if os.fork()==0:
  if os.fork()==0:
    os.execv("/bin/sh",["sh","-c","while :; do sleep 1; done",sys.argv[1]])
  os._exit(0)
while True: time.sleep(1)' "$1" &) ; exit 0`,
	// A child cgroup made inside its own cgroup (or found there, left by an
	// earlier escapee of the same cgroup), which it then enters.
	"child cgroup":       `(setsid env -i /bin/sh -c 'cg="$1$(sed -n "s/^0:://p" /proc/self/cgroup)"; mkdir -p "$cg/escape" && echo $$ > "$cg/escape/cgroup.procs" || exit 9; while :; do /bin/sleep 1; done' "$1" "$2" &) ; exit 0`,
	"root still running": `trap '' TERM; sh -c 'while :; do sleep 1; done' "$1" & sleep 300`,
}

// survivors lists live processes whose command line holds marker, read
// from /proc; it trusts nothing the supervisor reports.
func survivors(marker string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(b), marker) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if i := strings.LastIndexByte(string(st), ')'); i > 0 && i+2 < len(st) && st[i+2] != 'Z' {
				out = append(out, e.Name()+":"+strings.ReplaceAll(string(b), "\x00", " "))
			}
		}
	}
	return out
}

// TestEscapeSuiteUnderEachMechanism runs every escape under every
// mechanism this machine can produce: Terminate must report the forced
// mechanism, verified, and /proc must show no survivor.
func TestEscapeSuiteUnderEachMechanism(t *testing.T) {
	s, err := NewSupervisor(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mount, _ := cgroup2Mount()
	own, _ := ownCgroup()
	for _, mech := range mechanisms {
		t.Run(mech.name, func(t *testing.T) {
			switch {
			case mech.name == MechanismPIDNamespace && s.PIDNamespaceUnavailable() != "":
				t.Skip(s.PIDNamespaceUnavailable())
			case mech.name == MechanismCgroup && s.CgroupUnavailable() != "":
				t.Skip(s.CgroupUnavailable())
			}
			for name, script := range escapes {
				t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
					if strings.Contains(script, "$2") && mount == "" {
						t.Skip("no cgroup v2 mount")
					}
					if strings.Contains(name, "cgroup") && mech.name == MechanismSubreaper && unix.Access(filepath.Join(mount, own, "cgroup.procs"), unix.W_OK) != nil {
						t.Skip("this user cannot move a process between cgroups here, so the escape cannot happen")
					}
					m := fmt.Sprintf("gatehouse-escape-%d", time.Now().UnixNano())
					spec := shSpec(script, m, mount, filepath.Join(mount, own))
					mech.spec(&spec)
					tr, err := s.Start(spec)
					if err != nil {
						t.Fatal(err)
					}
					if name != "root still running" {
						waitExit(t, tr)
						if mech.name != MechanismPIDNamespace {
							waitFor(t, func() bool { return len(survivors(m)) > 0 }, "the escapee never started")
							time.Sleep(50 * time.Millisecond) // let it finish escaping
						}
					} else {
						waitFor(t, func() bool { return len(survivors(m)) > 0 }, "the child never started")
					}
					c := tr.Terminate(100 * time.Millisecond)
					if !c.Verified || c.Mechanism != mech.name || c.Reason != nil {
						t.Fatalf("cleanup %+v", c)
					}
					if left := survivors(m); len(left) > 0 {
						t.Fatalf("processes survived: %v", left)
					}
					waitExit(t, tr)
				})
			}
		})
	}
}

// Without the child-subreaper bit a double-forked process leaves the
// ancestry: cleanup must say it is not verified and why, even when the
// scan happens to find nothing.
func TestNoSubreaperIsNotVerified(t *testing.T) {
	s, err := NewSupervisor(Options{NoSubreaper: true, NoCgroup: true, NoPIDNamespace: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := fmt.Sprintf("gatehouse-nosub-%d", time.Now().UnixNano())
	tr, err := s.Start(shSpec(escapes["empty environment"], m, "", ""))
	if err != nil {
		t.Fatal(err)
	}
	waitExit(t, tr)
	waitFor(t, func() bool { return len(survivors(m)) > 0 }, "the escapee never started")
	c := tr.Terminate(100 * time.Millisecond)
	if c.Verified || c.Reason == nil || !strings.Contains(*c.Reason, "subreaper") || c.Mechanism != MechanismProcessGroup {
		t.Fatalf("cleanup %+v", c)
	}
	// The escapee indeed got away: the claim "not verified" was true.
	left := survivors(m)
	if len(left) == 0 {
		t.Fatal("the escapee was ended without ownership; the test shows nothing")
	}
	for _, l := range left {
		var pid int
		fmt.Sscan(strings.SplitN(l, ":", 2)[0], &pid)
		syscallKill(pid)
	}
}

// An orphan is owned by every tree that was running when it started, and
// a tree never claims a root the supervisor started for another.
func TestOrphansAndRootsAcrossTrees(t *testing.T) {
	s, err := NewSupervisor(Options{NoCgroup: true, NoPIDNamespace: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m1 := fmt.Sprintf("gatehouse-long-%d", time.Now().UnixNano())
	long, err := s.Start(shSpec(`sh -c 'while :; do sleep 1; done' "$1"`, m1, "", ""))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(survivors(m1)) > 0 }, "tree 1 never started")
	m2 := fmt.Sprintf("gatehouse-short-%d", time.Now().UnixNano())
	short, err := s.Start(shSpec(escapes["empty environment"], m2, "", ""))
	if err != nil {
		t.Fatal(err)
	}
	waitExit(t, short)
	waitFor(t, func() bool { return len(survivors(m2)) > 0 }, "the escapee never started")
	for _, p := range short.Members() {
		if p == long.Pid() {
			t.Fatal("a tree claimed another tree's root")
		}
	}
	if c := short.Terminate(100 * time.Millisecond); !c.Verified || len(survivors(m2)) > 0 {
		t.Fatalf("cleanup %+v survivors %v", c, survivors(m2))
	}
	if len(survivors(m1)) == 0 {
		t.Fatal("ending tree 2 ended tree 1")
	}
	if c := long.Terminate(100 * time.Millisecond); !c.Verified || len(survivors(m1)) > 0 {
		t.Fatalf("cleanup %+v", c)
	}
	waitExit(t, long)
}

func shSpec(script, m, mount, own string) Spec {
	devnull, _ := os.Open(os.DevNull)
	mk := marker()
	return Spec{
		Path: "/bin/sh", Args: []string{"sh", "-c", script, "sh", m, mount, own},
		Env: []string{"PATH=/usr/bin:/bin", mk}, Dir: "/", Files: []*os.File{devnull, devnull, devnull}, Marker: mk,
	}
}

func waitFor(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal(msg)
}
