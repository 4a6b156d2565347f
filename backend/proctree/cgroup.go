package proctree

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// cgroupParentName is the directory, below this process's own cgroup, that
// holds one child cgroup per owned tree.
const cgroupParentName = "gatehouse"

// findCgroupParent locates a writable cgroup v2 directory for per-tree
// cgroups: the cgroup2 mount (found through /proc/self/mountinfo, never
// assumed to be /sys/fs/cgroup) joined with this process's own cgroup path,
// plus cgroupParentName. It returns "" and the reason when there is none.
func findCgroupParent() (string, error) {
	mount, err := cgroup2Mount()
	if err != nil {
		return "", err
	}
	self, err := ownCgroup()
	if err != nil {
		return "", err
	}
	parent := filepath.Join(mount, self, cgroupParentName)
	if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("cgroup v2 at %s is not writable: %w", filepath.Join(mount, self), err)
	}
	if _, err := os.Stat(filepath.Join(parent, "cgroup.procs")); err != nil {
		return "", fmt.Errorf("cgroup v2 at %s is not usable: %w", parent, err)
	}
	// The directory may exist already (made by another user): this process
	// must be able to make cgroups in it, and starting a child inside one
	// needs write access to the cgroup.procs of the common ancestor, its
	// own cgroup.
	if err := unix.Access(parent, unix.W_OK|unix.X_OK); err != nil {
		return "", fmt.Errorf("cgroup v2 at %s is not writable by this user: %w", parent, err)
	}
	if err := unix.Access(filepath.Join(mount, self, "cgroup.procs"), unix.W_OK); err != nil {
		return "", fmt.Errorf("cgroup v2 at %s is not delegated to this user: %w", filepath.Join(mount, self), err)
	}
	return parent, nil
}

func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options... - fstype source superopts
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		if fs := strings.Fields(post); len(fs) > 0 && fs[0] == "cgroup2" {
			if f := strings.Fields(pre); len(f) >= 5 {
				return unescapeMount(f[4]), nil
			}
		}
	}
	return "", errors.New("no cgroup2 mount in /proc/self/mountinfo")
}

// unescapeMount undoes mountinfo's octal escapes (\040 for space etc.).
func unescapeMount(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var c byte
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &c); err == nil {
				b.WriteByte(c)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func ownCgroup() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return p, nil
		}
	}
	return "", errors.New("this process has no cgroup v2 membership")
}

// cgroup is one tree's cgroup directory.
type cgroup struct {
	path string
	fd   int // O_PATH directory fd for CLONE_INTO_CGROUP
}

func newCgroup(parent, name string) (*cgroup, error) {
	p := filepath.Join(parent, name)
	if err := os.Mkdir(p, 0o755); err != nil {
		return nil, fmt.Errorf("proctree: create cgroup: %w", err)
	}
	fd, err := unix.Open(p, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		os.Remove(p)
		return nil, fmt.Errorf("proctree: open cgroup: %w", err)
	}
	return &cgroup{path: p, fd: fd}, nil
}

func (c *cgroup) populated() (bool, error) {
	b, err := os.ReadFile(filepath.Join(c.path, "cgroup.events"))
	if err != nil {
		return false, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "populated "); ok {
			return v != "0", nil
		}
	}
	return false, errors.New("cgroup.events has no populated line")
}

func (c *cgroup) procs() []int {
	b, err := os.ReadFile(filepath.Join(c.path, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		var pid int
		if _, err := fmt.Sscan(f, &pid); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// procsBelow lists the processes of the cgroup and of every cgroup below
// it (a tree may create child cgroups inside its own).
func (c *cgroup) procsBelow() []int {
	out := c.procs()
	filepath.WalkDir(c.path, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != c.path {
			out = append(out, (&cgroup{path: p}).procs()...)
		}
		return nil
	})
	return out
}

func (c *cgroup) kill() error {
	return os.WriteFile(filepath.Join(c.path, "cgroup.kill"), []byte("1"), 0)
}

// waitEmpty polls cgroup.events until populated is 0 or the deadline passes.
func (c *cgroup) waitEmpty(deadline time.Time) bool {
	for {
		pop, err := c.populated()
		if err == nil && !pop {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// remove closes the fd (once, however often it is called) and removes the (empty) cgroup directory and the
// empty cgroups a tree made below it, deepest first.
func (c *cgroup) remove() error {
	if c.fd >= 0 {
		unix.Close(c.fd)
		c.fd = -1 // once: the number may be another file's next
	}
	var dirs []string
	filepath.WalkDir(c.path, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i > 0; i-- {
		os.Remove(dirs[i])
	}
	return os.Remove(c.path)
}

// SweepCgroups kills and removes the per-tree cgroups that instances which
// are no longer running left behind, where this machine gives Gatehouse a
// writable cgroup v2. It returns the names it removed.
func SweepCgroups() []string {
	parent, err := findCgroupParent()
	if err != nil {
		return nil
	}
	return sweepCgroups(parent)
}

func sweepCgroups(parent string) (swept []string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		if !e.IsDir() || !Stale(e.Name()) {
			continue
		}
		c := &cgroup{path: filepath.Join(parent, e.Name()), fd: -1}
		c.kill()
		c.waitEmpty(time.Now().Add(2 * time.Second))
		if c.remove() == nil {
			swept = append(swept, e.Name())
		}
	}
	return swept
}
