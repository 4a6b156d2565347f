package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Workspace is the directory a script runs in, bound to the identity
// (device and inode) it had when it was resolved. A later rename or
// replacement of the path is detected before launch.
type Workspace struct {
	Path string `json:"path"`
	Dev  uint64 `json:"dev"`
	Ino  uint64 `json:"ino"`
}

// ResolveWorkspace resolves dir (symlinks followed once, now) to an
// absolute path and records its identity.
func ResolveWorkspace(dir string) (Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Workspace{}, fmt.Errorf("runner: workspace %q: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return Workspace{}, fmt.Errorf("runner: workspace %q: %w", dir, err)
	}
	w := Workspace{Path: real}
	dev, ino, err := dirIdentity(real)
	if err != nil {
		return Workspace{}, err
	}
	w.Dev, w.Ino = dev, ino
	return w, nil
}

// Recheck confirms the path still names the same directory, reached
// without following a symlink at its last component.
func (w Workspace) Recheck() error {
	dev, ino, err := dirIdentity(w.Path)
	if err != nil {
		return err
	}
	if dev != w.Dev || ino != w.Ino {
		return fmt.Errorf("workspace %s was replaced after it was approved", w.Path)
	}
	return nil
}

func dirIdentity(p string) (dev, ino uint64, err error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return 0, 0, fmt.Errorf("runner: workspace: %w", err)
	}
	if !fi.IsDir() {
		return 0, 0, fmt.Errorf("runner: workspace %s is not a directory", p)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, fmt.Errorf("runner: workspace %s: no identity", p)
	}
	return uint64(st.Dev), st.Ino, nil
}
