package proctree

import (
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A root the supervisor started is never an orphan, even when it exits
// and is reaped between the scan of /proc that saw it and the moment the
// scan's members are decided: every tree would otherwise claim another
// tree's root (a capture's renderer helper ending during its target's
// settlement was recorded as a process of the target, alive at the
// deadline). The hook makes that window certain: after the scan, the
// other tree's root is killed and reaped before the roots are read.
func TestAReapedRootIsNotAnOrphan(t *testing.T) {
	withSupervisor(t, func(t *testing.T, s *Supervisor) {
		a, _ := startSh(t, s, "exec sleep 30")
		defer a.Terminate(Grace)
		b, _ := startSh(t, s, "exec sleep 30")
		defer b.Terminate(Grace)
		var once sync.Once
		s.afterScan = func() {
			once.Do(func() {
				syscall.Kill(b.Pid(), syscall.SIGKILL)
				waitExit(t, b)
			})
		}
		got := a.Members()
		s.afterScan = nil
		if slices.Contains(got, b.Pid()) {
			t.Fatalf("tree %d claims %d, the root of another tree reaped during its scan: members %v", a.Pid(), b.Pid(), got)
		}
		if !slices.Contains(got, a.Pid()) {
			t.Fatalf("tree %d lost its own root: members %v", a.Pid(), got)
		}
	})
}

// An orphan that comes to hold the pid of a root reaped before (pids are
// reused) is still the orphan of the trees running when it started: a
// reaped root is recognized by its pid and its start time together. The
// orphan here is a double fork's; the record of reaped roots is given an
// entry for its pid with another start time during the scan, as the
// reaped root's would be. (With a cgroup the orphan is the tree's by its
// cgroup as well; the nocgroup run is the one that tests the ancestry
// rule.)
func TestAnOrphanOnAReapedRootsPidIsClaimed(t *testing.T) {
	withSupervisor(t, func(t *testing.T, s *Supervisor) {
		a, m := startSh(t, s, "(exec sleep 30 &); exec sleep 30")
		defer a.Terminate(Grace)
		// Found by its marker, not by Members: a member seen once stays
		// one, and this must be the first scan that decides.
		orphan := 0
		for deadline := time.Now().Add(5 * time.Second); orphan == 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			for _, pid := range ScanMarked(m) {
				if st, err := readStat(pid); err == nil && pid != a.Pid() && st.ppid == s.inst.Pid {
					orphan = pid
				}
			}
		}
		if orphan == 0 {
			t.Fatal("the double fork's orphan never appeared")
		}
		st, err := readStat(orphan)
		if err != nil {
			t.Fatal(err)
		}
		// The root with the orphan's pid is reaped during the scan (the
		// hook runs with the scan done and the supervisor unlocked).
		s.afterScan = func() {
			s.mu.Lock()
			s.reaped.add(orphan, st.startTime-1)
			s.mu.Unlock()
		}
		got := a.Members()
		s.afterScan = nil
		if !slices.Contains(got, orphan) {
			t.Fatalf("orphan %d on a reaped root's pid escaped its tree: members %v", orphan, got)
		}
	})
}

// The record of reaped roots says when it no longer reaches back to a
// scan's start, so that the scan is taken again instead of trusting it.
func TestReapedRootsRecordKnowsItsReach(t *testing.T) {
	var r reapedRoots
	start := r.next
	for i := range len(r.roots) {
		r.add(1000+i, 1)
	}
	set := rootSet{}
	if !r.since(start, set) || len(set) != len(r.roots) {
		t.Fatalf("a full record: complete=%v with %d roots", r.since(start, rootSet{}), len(set))
	}
	r.add(5000, 1)
	set = rootSet{}
	if r.since(start, set) {
		t.Fatal("one past the record's size still called complete")
	}
	if _, ok := set[1000]; ok || len(set) != len(r.roots) {
		t.Fatalf("the overwritten root is still reported (%d roots)", len(set))
	}
}
