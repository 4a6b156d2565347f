package proctree

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
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

// Ownership mechanisms, strongest first, as Cleanup.Mechanism names them.
const (
	MechanismPIDNamespace = "pid_namespace"
	MechanismCgroup       = "cgroup"
	MechanismSubreaper    = "subreaper"
	MechanismProcessGroup = "process-group"
)

// Tree is one started process and every descendant it makes.
type Tree struct {
	sup       *Supervisor
	pid       int
	marker    string
	cg        *cgroup
	pidns     bool // the root is the init of a PID namespace of its own
	netns     bool // the tree has a network namespace of its own
	rootStart uint64
	mech      string
	limits    []Limit

	exit   chan struct{}
	mu     sync.Mutex
	status unix.WaitStatus
	known  map[int]uint64 // pid → start time of every process seen as a member
	nsFD   int            // holds the PID namespace (so its inode is not reused); -1 when none
	nsDev  uint64
	nsIno  uint64
}

// Pid is the root process's pid (as this process sees it).
func (t *Tree) Pid() int { return t.pid }

// Exited is closed when the root process has exited and been reaped.
func (t *Tree) Exited() <-chan struct{} { return t.exit }

// Mechanism names the strongest ownership mechanism this tree has:
// MechanismPIDNamespace, MechanismCgroup, MechanismSubreaper or
// MechanismProcessGroup.
func (t *Tree) Mechanism() string { return t.mech }

func (t *Tree) mechanism() string {
	switch {
	case t.pidns:
		return MechanismPIDNamespace
	case t.sup.subreaper && t.cg != nil:
		return MechanismCgroup
	case t.sup.subreaper:
		return MechanismSubreaper
	case t.cg != nil:
		return MechanismCgroup
	}
	return MechanismProcessGroup
}

// NetNamespace reports whether the tree runs in a network namespace of
// its own.
func (t *Tree) NetNamespace() bool { return t.netns }

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

// openNamespace holds the root's PID namespace open, so its identity
// cannot be taken by a later namespace while the tree is owned. A root
// that is already gone leaves nothing to hold: its namespace ended with it.
func (t *Tree) openNamespace() {
	fd, err := unix.Open(fmt.Sprintf("/proc/%d/ns/pid", t.pid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		unix.Close(fd)
		return
	}
	t.nsFD, t.nsDev, t.nsIno = fd, st.Dev, st.Ino
}

// inNamespace reports whether pid lives in the tree's PID namespace.
func (t *Tree) inNamespace(pid int) bool {
	if t.nsIno == 0 {
		return false
	}
	var st unix.Stat_t
	if unix.Stat(fmt.Sprintf("/proc/%d/ns/pid", pid), &st) != nil {
		return false
	}
	return st.Dev == t.nsDev && st.Ino == t.nsIno
}

// Members lists the live processes of the tree right now, from /proc and
// the kernel's own records, never from anything the tree's processes can
// set for themselves (environment, process group, session):
//
//   - the root and every process seen before as a member (same start time);
//   - every process in the tree's PID namespace;
//   - every process in the tree's cgroup or a cgroup below it;
//   - every direct child of this process that the supervisor did not
//     start itself and that started no earlier than the root: an orphan
//     reparented to this child subreaper. It may belong to any tree that
//     was running when it started, so every such tree owns it;
//   - every descendant of all of these, by parent links.
func (t *Tree) Members() []int {
	self := t.sup.inst.Pid
	stats, roots := t.scanWithRoots(self)

	t.mu.Lock()
	defer t.mu.Unlock()
	set := map[int]bool{}
	add := func(pid int) {
		set[pid] = true
		if t.known[pid] == 0 {
			t.known[pid] = stats[pid].startTime
		}
	}
	for pid, start := range t.known {
		if st, ok := stats[pid]; ok && (start == 0 || start == st.startTime) {
			add(pid)
		}
	}
	if t.cg != nil {
		for _, p := range t.cg.procsBelow() {
			if _, ok := stats[p]; ok {
				add(p)
			}
		}
	}
	for pid, st := range stats {
		if set[pid] || st.startTime < t.rootStart {
			continue
		}
		if st.ppid == self && !roots.has(pid, st) {
			add(pid) // an orphan of a tree that was running when it started
		} else if t.nsIno != 0 && t.inNamespace(pid) {
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
	out := make([]int, 0, len(set))
	for pid := range set {
		out = append(out, pid)
	}
	sort.Ints(out)
	return out
}

// scanWithRoots reads every live process's stat (snapshot) and the pids
// of every root the supervisor started that was alive at some moment of
// that read. Roots are registered under the supervisor's lock in the same
// critical section as their fork, so a root the scan saw is either still
// waited for afterwards or was reaped since the scan began; the second
// kind is read from the supervisor's record of reaped roots, and when
// that record no longer reaches back to the scan's start (more roots
// reaped meanwhile than it holds) the scan is taken again.
func (t *Tree) scanWithRoots(self int) (map[int]procStat, rootSet) {
	for try := 0; ; try++ {
		t.sup.mu.Lock()
		since := t.sup.reaped.next
		t.sup.mu.Unlock()
		stats := t.snapshot(self)
		if t.sup.afterScan != nil {
			t.sup.afterScan()
		}
		t.sup.mu.Lock()
		roots := make(rootSet, len(t.sup.waiters))
		for pid := range t.sup.waiters {
			roots[pid] = 0 // alive: its pid cannot have been reused
		}
		complete := t.sup.reaped.since(since, roots)
		t.sup.mu.Unlock()
		if complete || try == 9 {
			// Ten scans each outrun by more than a record's worth of
			// reaped roots: the roots missing are taken as orphans (the
			// safe side: a tree ends more than it must, never less).
			return stats, roots
		}
	}
}

// rootSet holds roots by pid with their start time (0: any), so that a
// pid reused after its root was reaped (by an orphan, say) is not taken
// for the root.
type rootSet map[int]uint64

// has reports whether pid, as st shows it, is one of the roots.
func (r rootSet) has(pid int, st procStat) bool {
	start, ok := r[pid]
	return ok && (start == 0 || start == st.startTime)
}

// reapedRoots is a ring of the roots the supervisor reaped last, numbered
// in the order they were reaped.
type reapedRoots struct {
	roots [1024]struct {
		pid   int
		start uint64
	}
	next uint64 // the number the next reaped root gets
}

func (r *reapedRoots) add(pid int, start uint64) {
	e := &r.roots[r.next%uint64(len(r.roots))]
	e.pid, e.start = pid, start
	r.next++
}

// since adds to set the roots reaped from number n on and reports whether
// the ring still holds all of them.
func (r *reapedRoots) since(n uint64, set rootSet) bool {
	complete := r.next-n <= uint64(len(r.roots))
	if !complete {
		n = r.next - uint64(len(r.roots))
	}
	for ; n < r.next; n++ {
		e := r.roots[n%uint64(len(r.roots))]
		if _, alive := set[e.pid]; !alive {
			set[e.pid] = e.start
		}
	}
	return complete
}

// snapshot reads every live process's stat. /proc is not read atomically:
// a process may be read with a parent that exited (so it is about to be
// reparented, to this subreaper or a namespace's init) before the scan
// reached it, and a whole chain would then look unrelated to the tree. A
// scan where a process that may be the tree's has a parent missing from
// the scan is repeated (a few times, briefly) until it is consistent.
func (t *Tree) snapshot(self int) map[int]procStat {
	var stats map[int]procStat
	for try := 0; try < 50; try++ {
		pids, _ := allPids()
		stats = make(map[int]procStat, len(pids))
		for _, pid := range pids {
			if st, err := readStat(pid); err == nil && live(st) && pid != self {
				stats[pid] = st
			}
		}
		consistent := true
		for _, st := range stats {
			if _, ok := stats[st.ppid]; !ok && st.ppid != self && st.ppid > 0 && st.startTime >= t.rootStart {
				consistent = false
				break
			}
		}
		if consistent {
			break
		}
		time.Sleep(time.Millisecond)
	}
	return stats
}

// Cleanup is the result of ending a tree.
type Cleanup struct {
	// Verified is true only when no member remains and the mechanism in
	// force cannot be escaped by any technique of the escape suite.
	Verified bool `json:"verified"`
	// Mechanism is the strongest ownership the tree had: "pid_namespace"
	// (the kernel ends the namespace with its init), "cgroup" (cgroup.kill
	// and populated 0, plus the subreaper ancestry), "subreaper" (ancestry
	// only) or "process-group" (no subreaper: not verifiable).
	Mechanism string `json:"mechanism"`
	// Reason says why Verified is false (null when it is true).
	Reason *string `json:"reason"`
	// Signalled counts processes that had to be sent a signal.
	Signalled int `json:"signalled"`
	// Remaining lists members still present when verification gave up.
	Remaining []int `json:"remaining,omitempty"`
	// Limits states each resource limit the tree was started with as it
	// applied (absent when none was asked for).
	Limits []Limit `json:"limits,omitempty"`
}

// escapable says why the tree's mechanism cannot prove absence, or "".
func (t *Tree) escapable() string {
	if t.pidns || t.sup.subreaper {
		return ""
	}
	return "this process is not a child subreaper, so a process that double-forks leaves the tree's ancestry and cannot be proven gone"
}

// Terminate ends the whole tree: SIGTERM to every member, up to grace for
// them to leave, then SIGKILL (cgroup.kill when there is a cgroup, the
// namespace's init when there is one) until none remains, then
// verification from /proc. A tree whose members are already gone returns
// at once. It is safe to call more than once.
func (t *Tree) Terminate(grace time.Duration) Cleanup {
	c := Cleanup{Mechanism: t.Mechanism(), Limits: t.limits}
	if t.reapedEmptyNamespace() {
		c.Verified = true
		t.release()
		return c
	}
	members := t.Members()
	if len(members) > 0 || (t.cg != nil && !t.cg.waitEmpty(time.Now())) {
		c.Signalled = len(members)
		t.signal(members, syscall.SIGTERM)
		deadline := time.Now().Add(grace)
		for len(members) > 0 && time.Now().Before(deadline) && !t.onlyDeafInit(members) {
			time.Sleep(5 * time.Millisecond)
			members = t.Members()
		}
		// SIGKILL rounds until a confirmed scan finds nothing: a scan can
		// find a new member (an orphan of an overlapping tree, a late fork)
		// right after one came up empty, so emptiness is confirmed by the
		// kernel's own signal (the namespace init's exit, populated 0) and
		// one more scan before it is believed.
		deadline = time.Now().Add(killDeadline)
		for {
			if len(members) == 0 {
				if t.pidns {
					select { // the init's exit completes only once its namespace is empty
					case <-t.exit:
					case <-time.After(time.Until(deadline)):
					}
				}
				if t.cg != nil && !t.cg.waitEmpty(deadline) {
					members = t.cg.procsBelow()
				} else {
					members = t.Members()
				}
				if len(members) == 0 {
					break
				}
			}
			if !time.Now().Before(deadline) {
				break
			}
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
	c.Remaining = members
	switch why := t.escapable(); {
	case len(members) > 0:
		r := fmt.Sprintf("%d processes of the tree remain after SIGKILL", len(members))
		c.Reason = &r
	case why != "":
		c.Reason = &why
	default:
		c.Verified = true
	}
	if len(members) == 0 {
		t.release()
	}
	return c
}

// reapedEmptyNamespace reports whether the tree is provably gone without
// a scan of /proc (which reads every process's stat, the largest cost of
// ending a short attempt on a busy machine): its root was the init of a
// PID namespace of its own and has been reaped — the kernel kills every
// process of the namespace when its init exits and lets the init be
// reaped only once they are all gone, and no process can leave its PID
// namespace — and its cgroup, if any, has "populated 0" (which counts the
// cgroups below it too, so nothing was moved in from outside either).
func (t *Tree) reapedEmptyNamespace() bool {
	if !t.pidns {
		return false
	}
	select {
	case <-t.exit:
	default:
		return false
	}
	if t.cg != nil {
		if pop, err := t.cg.populated(); err != nil || pop {
			return false
		}
	}
	return true
}

// onlyDeafInit reports whether the one member left is the root as the
// init of its PID namespace without a SIGTERM handler: the kernel drops
// SIGTERM for it, so waiting out the grace period achieves nothing.
func (t *Tree) onlyDeafInit(members []int) bool {
	return t.pidns && len(members) == 1 && members[0] == t.pid && !catches(t.pid, syscall.SIGTERM)
}

// release lets go of the namespace and removes the verified-empty cgroup
// in the background: cgroup removal waits for the kernel's RCU grace
// period (milliseconds), which need not delay the caller. The
// supervisor's Close waits for it.
func (t *Tree) release() {
	t.mu.Lock()
	if t.nsFD >= 0 {
		unix.Close(t.nsFD)
		t.nsFD, t.nsIno = -1, 0 // never compare against a reusable identity
	}
	cg := t.cg // taken under the lock: two releases never remove (and close) it twice
	t.cg = nil
	t.mu.Unlock()
	if cg == nil {
		return
	}
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
