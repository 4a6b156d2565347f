// Package proctree owns the processes Gatehouse starts and proves they are
// gone afterwards. It is shared by the checked runner and process capture.
//
// Ownership uses every mechanism the machine offers, strongest first: a
// per-tree cgroup v2 (started inside it with CLONE_INTO_CGROUP, ended with
// cgroup.kill, confirmed by "populated 0"), the process as a child
// subreaper (orphaned descendants reparent to it and are reaped by it), and
// a new session and process group per tree. A marker in each tree's
// environment lets a /proc scan find members that left the group, and lets
// the next instance sweep the leftovers of one that crashed.
package proctree

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Instance identifies one running Gatehouse process across pid reuse: its
// pid plus the kernel's start time of that pid.
type Instance struct {
	Pid       int
	StartTime uint64
}

// Self returns the calling process's Instance.
func Self() (Instance, error) {
	st, err := readStat(os.Getpid())
	if err != nil {
		return Instance{}, fmt.Errorf("proctree: read own stat: %w", err)
	}
	return Instance{Pid: os.Getpid(), StartTime: st.startTime}, nil
}

// Tag is a file- and cgroup-name-safe encoding of the instance, used as the
// prefix of everything it creates that may need sweeping.
func (i Instance) Tag() string { return fmt.Sprintf("i%d.%d", i.Pid, i.StartTime) }

// ParseTag reads the Instance from a name that starts with a Tag followed
// by "." or the end of the name.
func ParseTag(name string) (Instance, bool) {
	if !strings.HasPrefix(name, "i") {
		return Instance{}, false
	}
	parts := strings.SplitN(name[1:], ".", 3)
	if len(parts) < 2 {
		return Instance{}, false
	}
	pid, err1 := strconv.Atoi(parts[0])
	st, err2 := strconv.ParseUint(parts[1], 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 {
		return Instance{}, false
	}
	return Instance{Pid: pid, StartTime: st}, true
}

// Alive reports whether the instance is still running (same pid, same
// start time).
func (i Instance) Alive() bool {
	st, err := readStat(i.Pid)
	return err == nil && st.startTime == i.StartTime && st.state != 'Z' && st.state != 'X'
}

// Stale reports whether name carries the tag of an instance that is no
// longer running. Names without a tag are stale too: nothing of a live
// instance is ever created without one.
func Stale(name string) bool {
	in, ok := ParseTag(name)
	return !ok || !in.Alive()
}
