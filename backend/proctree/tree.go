package proctree

import (
	"crypto/rand"
	"encoding/hex"
	"sort"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Grace is how long a tree gets between SIGTERM and SIGKILL.
const Grace = 1000 * time.Millisecond

// killDeadline bounds the SIGKILL phase; a tree still present after it is
// reported as not verified.
const killDeadline = 3 * time.Second

// Tree is one started process and every descendant it makes.
type Tree struct {
	sup    *Supervisor
	pid    int
	marker string
	cg     *cgroup

	exit   chan struct{}
	mu     sync.Mutex
	status unix.WaitStatus
	known  map[int]uint64 // pid → start time of every process seen as a member
}

// Pid is the root process's pid.
func (t *Tree) Pid() int { return t.pid }

// Exited is closed when the root process has exited and been reaped.
func (t *Tree) Exited() <-chan struct{} { return t.exit }

// ExitStatus reports how the root ended: its exit code, or -1 and the
// signal name when a signal killed it. Valid after Exited is closed.
func (t *Tree) ExitStatus() (code int, signal string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status.Signaled() {
		return -1, unix.SignalName(t.status.Signal())
	}
	return t.status.ExitStatus(), ""
}

func (t *Tree) exited(ws unix.WaitStatus) {
	t.mu.Lock()
	t.status = ws
	t.mu.Unlock()
	close(t.exit)
}

// Members lists the live processes of the tree right now: the cgroup's
// processes when the tree has one, plus every process found in /proc that
// descends from a known member, shares the root's session or process
// group, or carries the tree's environment marker. Known members are
// remembered with their start time, so a recycled pid never matches.
func (t *Tree) Members() []int {
	self := t.sup.inst.Pid
	pids, _ := allPids()
	stats := make(map[int]procStat, len(pids))
	for _, pid := range pids {
		if st, err := readStat(pid); err == nil && live(st) && pid != self {
			stats[pid] = st
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	isKnown := func(pid int) bool {
		st, ok := stats[pid]
		start, seen := t.known[pid]
		return ok && seen && (start == 0 || start == st.startTime)
	}
	set := map[int]bool{}
	add := func(pid int) {
		set[pid] = true
		if t.known[pid] == 0 {
			t.known[pid] = stats[pid].startTime
		}
	}
	if t.cg != nil {
		for _, p := range t.cg.procs() {
			if _, ok := stats[p]; ok {
				add(p)
			}
		}
	}
	for pid, st := range stats {
		if isKnown(pid) || st.sid == t.pid || st.pgid == t.pid {
			add(pid)
		}
	}
	// Descent by parent links, repeated until no new member appears.
	for changed := true; changed; {
		changed = false
		for pid, st := range stats {
			if !set[pid] && set[st.ppid] {
				add(pid)
				changed = true
			}
		}
	}
	// Only processes started after the root can belong to the tree, so only
	// their environments are read (the expensive part of a scan).
	rootStart := t.known[t.pid]
	for pid, st := range stats {
		if !set[pid] && st.startTime >= rootStart && hasEnv(pid, t.marker) {
			add(pid)
		}
	}
	out := make([]int, 0, len(set))
	for pid := range set {
		out = append(out, pid)
	}
	sort.Ints(out)
	return out
}

// Cleanup is the result of ending a tree.
type Cleanup struct {
	// Verified is true only when no member remains.
	Verified bool `json:"verified"`
	// Mechanism is how absence was confirmed: "cgroup" (populated 0 plus a
	// /proc scan), "subreaper" or "process-group" (/proc scans).
	Mechanism string `json:"mechanism"`
	// Signalled counts processes that had to be sent a signal.
	Signalled int `json:"signalled"`
	// Remaining lists members still present when verification gave up.
	Remaining []int `json:"remaining,omitempty"`
}

// Terminate ends the whole tree: SIGTERM to every member, up to grace for
// them to leave, then SIGKILL (cgroup.kill when there is a cgroup) until
// none remains, then verification. A tree whose members are already gone
// returns at once. It is safe to call more than once.
func (t *Tree) Terminate(grace time.Duration) Cleanup {
	c := Cleanup{Mechanism: t.sup.Mechanism()}
	if t.cg == nil && c.Mechanism == "cgroup" {
		c.Mechanism = "subreaper"
	}
	members := t.Members()
	if len(members) == 0 && (t.cg == nil || t.cg.waitEmpty(time.Now())) {
		// Already gone: this scan (and an empty cgroup) is the verification.
		c.Verified = true
		t.releaseCgroupAsync()
		return c
	}
	if len(members) > 0 {
		c.Signalled = len(members)
		t.signal(members, syscall.SIGTERM)
		deadline := time.Now().Add(grace)
		for len(members) > 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
			members = t.Members()
		}
		deadline = time.Now().Add(killDeadline)
		for len(members) > 0 && time.Now().Before(deadline) {
			if t.cg != nil {
				t.cg.kill()
			}
			// Stop first so forkers cannot add members between scan and kill.
			t.signal(members, syscall.SIGSTOP)
			t.signal(members, syscall.SIGKILL)
			time.Sleep(2 * time.Millisecond)
			members = t.Members()
		}
	}
	if t.cg != nil && !t.cg.waitEmpty(time.Now().Add(killDeadline)) {
		members = append(members, t.cg.procs()...)
	}
	if len(members) == 0 {
		members = t.Members() // the final word comes from /proc, not bookkeeping
	}
	c.Verified = len(members) == 0
	c.Remaining = members
	if c.Verified {
		t.releaseCgroupAsync()
	}
	return c
}

// releaseCgroupAsync removes the verified-empty cgroup in the background:
// cgroup removal waits for the kernel's RCU grace period (milliseconds),
// which need not delay the caller. The supervisor's Close waits for it.
func (t *Tree) releaseCgroupAsync() {
	if t.cg == nil {
		return
	}
	cg := t.cg
	t.cg = nil
	t.sup.background.Add(1)
	go func() {
		defer t.sup.background.Done()
		cg.remove()
	}()
}

func (t *Tree) signal(pids []int, sig syscall.Signal) {
	for _, p := range pids {
		if p > 1 && p != t.sup.inst.Pid {
			syscall.Kill(p, sig)
		}
	}
	if t.pid > 1 {
		syscall.Kill(-t.pid, sig) // the original process group
	}
}

func (t *Tree) releaseCgroup() {
	if t.cg != nil {
		t.cg.remove()
		t.cg = nil
	}
}

func randomName() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
