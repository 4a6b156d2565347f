package proctree

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// active guards the one Supervisor a process may have. Reaping with
// wait4(-1) and the child-subreaper bit are properties of the whole
// process, so two supervisors would steal each other's exit statuses; this
// flag is the only package-level state and exists to refuse that.
var active atomic.Bool

// ErrSupervisorActive is returned by NewSupervisor while another
// Supervisor of this process is open.
var ErrSupervisorActive = errors.New("proctree: a Supervisor is already active in this process")

// Options configure a Supervisor. The No* fields switch a mechanism off
// even where the machine offers it (tests use them to force each one).
type Options struct {
	// NoPIDNamespace never starts a tree in a PID namespace of its own.
	NoPIDNamespace bool
	// NoCgroup disables per-tree cgroups even where cgroup v2 is writable.
	NoCgroup bool
	// NoSubreaper leaves the child-subreaper bit unset.
	NoSubreaper bool
}

// Supervisor is the single owner of every wait for child processes of
// this process. While it is open, nothing else in the process may wait
// for children (os/exec's Cmd.Wait included); use Supervisor.Start.
type Supervisor struct {
	inst         Instance
	cgroupParent string
	cgroupErr    error
	subreaper    bool
	pidnsErr     error // why PID namespaces cannot be made (nil: they can)
	netnsErr     error // why network namespaces cannot be made (nil: they can)
	// limitErr says, per controller ("pids", "memory"), why per-tree
	// cgroups cannot have its limit (absent: they can).
	limitErr map[string]error

	mu        sync.Mutex
	waiters   map[int]*Tree
	reaped    reapedRoots // roots reaped lately, for Tree.Members
	unclaimed map[int]unix.WaitStatus
	sigs      chan os.Signal
	stop      chan struct{}
	done      chan struct{}
	closed    bool

	background sync.WaitGroup // asynchronous cgroup removals

	// afterScan, when set (by tests), runs in Tree.Members between its
	// scan of /proc and its reading of the roots.
	afterScan func()
}

// NewSupervisor makes this process a child subreaper, finds a writable
// cgroup v2 subtree, sweeps the leftovers of crashed instances, and starts
// reaping. Close it when done.
func NewSupervisor(opts Options) (*Supervisor, error) {
	if !active.CompareAndSwap(false, true) {
		return nil, ErrSupervisorActive
	}
	inst, err := Self()
	if err != nil {
		active.Store(false)
		return nil, err
	}
	s := &Supervisor{
		inst: inst, waiters: map[int]*Tree{}, unclaimed: map[int]unix.WaitStatus{},
		sigs: make(chan os.Signal, 16), stop: make(chan struct{}), done: make(chan struct{}),
	}
	if !opts.NoSubreaper {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err == nil {
			s.subreaper = true
		}
	}
	if opts.NoPIDNamespace {
		s.pidnsErr = errors.New("PID namespaces disabled by option")
	} else {
		s.pidnsErr = probeClone(unix.CLONE_NEWPID)
	}
	s.netnsErr = probeClone(unix.CLONE_NEWNET)
	if opts.NoCgroup {
		s.cgroupErr = errors.New("cgroups disabled by option")
	} else {
		s.cgroupParent, s.cgroupErr = findCgroupParent()
		if s.cgroupParent != "" {
			sweepCgroups(s.cgroupParent)
			s.limitErr = enableControllers(s.cgroupParent)
		}
	}
	signal.Notify(s.sigs, syscall.SIGCHLD)
	go s.reap()
	return s, nil
}

// Instance identifies this process for tags and sweeps.
func (s *Supervisor) Instance() Instance { return s.inst }

// Mechanism names the strongest cleanup mechanism available to a tree
// started without a PID namespace: "cgroup", "subreaper" or
// "process-group" (the last one cannot be verified; see Cleanup.Reason).
// Tree.Mechanism names the one a tree actually has.
func (s *Supervisor) Mechanism() string {
	switch {
	case s.cgroupParent != "":
		return "cgroup"
	case s.subreaper:
		return "subreaper"
	}
	return "process-group"
}

// PIDNamespaceUnavailable says why trees cannot get a PID namespace of
// their own ("" when they can).
func (s *Supervisor) PIDNamespaceUnavailable() string {
	if s.pidnsErr == nil {
		return ""
	}
	return s.pidnsErr.Error()
}

// NetNamespaceUnavailable says why trees cannot get a network namespace
// of their own ("" when they can).
func (s *Supervisor) NetNamespaceUnavailable() string {
	if s.netnsErr == nil {
		return ""
	}
	return s.netnsErr.Error()
}

// CgroupUnavailable says why per-tree cgroups are not used ("" when they are).
func (s *Supervisor) CgroupUnavailable() string {
	if s.cgroupErr == nil {
		return ""
	}
	return s.cgroupErr.Error()
}

// Close stops reaping, clears the child-subreaper bit it set, and releases
// the process-wide slot. Trees still
// running are not touched; terminate them first.
func (s *Supervisor) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.background.Wait()
	signal.Stop(s.sigs)
	close(s.stop)
	<-s.done
	if s.subreaper {
		unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
	}
	active.Store(false)
	return nil
}

// reap is the only caller of wait4 in the process while s is open.
func (s *Supervisor) reap() {
	defer close(s.done)
	for {
		s.reapAll()
		select {
		case <-s.sigs:
		case <-s.stop:
			return
		}
	}
}

func (s *Supervisor) reapAll() {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if err == unix.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
		s.mu.Lock()
		t, ok := s.waiters[pid]
		if ok {
			delete(s.waiters, pid)
			s.reaped.add(pid, t.rootStart)
		} else {
			// Either an orphaned descendant reparented to us (nobody waits
			// for it) or a child whose Start has not registered yet.
			s.unclaimed[pid] = ws
			if len(s.unclaimed) > 4096 {
				s.unclaimed = map[int]unix.WaitStatus{}
			}
		}
		s.mu.Unlock()
		if ok {
			t.exited(ws)
		}
	}
}

// Spec describes one process tree to start.
type Spec struct {
	// Path is the absolute path of the program; Args is the full argv
	// (Args[0] included). No shell is involved.
	Path string
	Args []string
	// Env is the complete environment; it must contain Marker when set.
	Env []string
	// Dir is the working directory.
	Dir string
	// Files become the child's descriptors 0, 1, 2, 3, …
	Files []*os.File
	// Marker, if set, is a "KEY=value" environment entry of this tree.
	// It is never used to decide membership (a tree can clear its
	// environment); only start-up sweeps of a crashed instance's leftovers
	// read such entries, as a best effort beside cgroups and namespaces.
	Marker string
	// Name, if set, names the tree's cgroup (after the instance tag).
	Name string
	// Setctty makes Files[0] (a terminal) the controlling terminal.
	Setctty bool
	// Unprivileged, when the caller runs as root, starts the tree in a new
	// user namespace where it is an ordinary user (uid and gid 1000, mapped
	// to the caller's), so file permission bits bind it as they bind any
	// user. It has no effect for other callers, who are ordinary already.
	Unprivileged bool
	// OwnUserNamespace says the program makes itself an ordinary user in
	// a user namespace of its own before anything else (the native
	// confinement launcher does, with confine.Request.UserNamespace).
	// For a root caller Start then makes the PID and network namespaces
	// directly, without a user namespace for the child: no full fork of
	// this process and no map writes across processes, the largest cost
	// of starting a tree here. The program must then do what Unprivileged
	// would have done.
	OwnUserNamespace bool
	// PIDNamespace starts the tree as the init of a PID namespace of its
	// own where the supervisor can make one (see PIDNamespaceUnavailable):
	// when the root exits or is killed, the kernel ends every process in
	// it, and no process can leave it. Signals other than SIGKILL and
	// SIGSTOP reach that root only if it handles them.
	PIDNamespace bool
	// NetNamespace starts the tree in a network namespace of its own (no
	// interface but a down loopback) where the supervisor can make one.
	NetNamespace bool
	// NoCgroup starts the tree without a cgroup of its own even where the
	// supervisor has them (a test seam forcing the subreaper mechanism).
	NoCgroup bool
	// Limits are set on the tree's cgroup before its root starts, where
	// the controllers are available; Cleanup.Limits says which applied.
	Limits Limits
}

// Start launches spec as a new session (and process group) led by the
// child, inside its own cgroup when available, with SIGKILL as the parent
// death signal.
func (s *Supervisor) Start(spec Spec) (*Tree, error) {
	if !filepathIsAbs(spec.Path) {
		return nil, fmt.Errorf("proctree: program path %q is not absolute", spec.Path)
	}
	if spec.Marker != "" && !contains(spec.Env, spec.Marker) {
		return nil, errors.New("proctree: the environment must carry the tree's marker")
	}
	t := &Tree{sup: s, marker: spec.Marker, exit: make(chan struct{}), known: map[int]uint64{}, nsFD: -1}
	attr := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL, Setctty: spec.Setctty, Ctty: 0}
	var ns uintptr
	if spec.PIDNamespace && s.pidnsErr == nil {
		ns |= syscall.CLONE_NEWPID
	}
	if spec.NetNamespace && s.netnsErr == nil {
		ns |= syscall.CLONE_NEWNET
		t.netns = true
	}
	if spec.Unprivileged && os.Geteuid() == 0 {
		if !spec.OwnUserNamespace {
			userNamespace(attr, 1000, 1000)
		}
	} else if ns != 0 && os.Geteuid() != 0 {
		// An ordinary user makes the namespaces inside a user namespace
		// where it keeps its own uid and gid.
		userNamespace(attr, os.Geteuid(), os.Getegid())
	}
	attr.Cloneflags |= ns
	t.pidns = ns&syscall.CLONE_NEWPID != 0
	defer func() { t.mech = t.mechanism() }()
	if s.cgroupParent != "" && !spec.NoCgroup {
		name := s.inst.Tag() + "." + spec.Name
		if spec.Name == "" {
			name = s.inst.Tag() + "." + randomName()
		}
		cg, err := newCgroup(s.cgroupParent, name)
		if err != nil {
			return nil, err
		}
		t.cg = cg
		attr.UseCgroupFD, attr.CgroupFD = true, cg.fd
		t.limits = applyLimits(cg.path, spec.Limits, s.limitErr)
	} else {
		why := errors.New("the tree has no cgroup of its own")
		if s.cgroupErr != nil {
			why = fmt.Errorf("the tree has no cgroup of its own: %w", s.cgroupErr)
		}
		t.limits = applyLimits("", spec.Limits, map[string]error{"pids": why, "memory": why})
	}
	fds := make([]uintptr, len(spec.Files))
	for i, f := range spec.Files {
		fds[i] = f.Fd()
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		t.releaseCgroup()
		return nil, errors.New("proctree: supervisor is closed")
	}
	// Pdeathsig fires when the creating OS thread exits; keep this
	// goroutine on one thread for the fork so that thread is a live one.
	runtime.LockOSThread()
	restore := dumpableForMaps(attr)
	pid, err := syscall.ForkExec(spec.Path, spec.Args, &syscall.ProcAttr{Dir: spec.Dir, Env: spec.Env, Files: fds, Sys: attr})
	restore()
	runtime.UnlockOSThread()
	if err != nil {
		s.mu.Unlock()
		t.releaseCgroup()
		return nil, fmt.Errorf("proctree: start %s: %w", spec.Path, err)
	}
	t.pid = pid
	t.known[pid] = 0
	if st, err := readStat(pid); err == nil {
		t.known[pid] = st.startTime
		t.rootStart = st.startTime
	}
	if t.pidns {
		t.openNamespace()
	}
	if ws, ok := s.unclaimed[pid]; ok {
		delete(s.unclaimed, pid)
		s.mu.Unlock()
		t.exited(ws)
	} else {
		s.waiters[pid] = t
		s.mu.Unlock()
	}
	return t, nil
}

// dumpableForMaps makes a non-dumpable process dumpable for the duration
// of a fork that needs user namespace maps, and returns the undo. An
// ordinary user writes the child's /proc/PID/uid_map, which belongs to
// root while the child (a copy of this process) is not dumpable. Root
// needs no such window. It runs under the supervisor's lock.
func dumpableForMaps(attr *syscall.SysProcAttr) func() {
	if os.Geteuid() == 0 || attr.UidMappings == nil {
		return func() {}
	}
	if d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err != nil || d != 0 {
		return func() {}
	}
	unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)
	return func() { unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }
}

// userNamespace makes attr start the child in a new user namespace where
// it has the given uid and gid, mapped to this process's effective ids
// (setgroups denied).
func userNamespace(attr *syscall.SysProcAttr, uid, gid int) {
	attr.Cloneflags |= syscall.CLONE_NEWUSER
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: os.Geteuid(), Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: os.Getegid(), Size: 1}}
	attr.GidMappingsEnableSetgroups = false
}

// probeClone reports whether a child can be cloned with the namespace
// flags (inside a user namespace for an ordinary user): it clones one that
// execs a path that does not exist, so ENOENT means the clone worked.
// It runs before the reaper starts; ForkExec reaps the failed child itself.
func probeClone(flags uintptr) error {
	attr := &syscall.SysProcAttr{Cloneflags: flags}
	if os.Geteuid() != 0 {
		userNamespace(attr, os.Geteuid(), os.Getegid())
	}
	_, err := syscall.ForkExec("/nonexistent/gatehouse-namespace-probe", []string{"probe"}, &syscall.ProcAttr{Sys: attr})
	if errors.Is(err, syscall.ENOENT) {
		return nil
	}
	if err == nil {
		return errors.New("namespace probe: an impossible program ran")
	}
	return fmt.Errorf("this machine refuses the namespace (clone flags %#x): %w", flags, err)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func filepathIsAbs(p string) bool { return len(p) > 0 && p[0] == '/' }
