package artifact

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Staging is a private, per-attempt copy of a Snapshot on disk: a 0700
// directory under the runs directory holding read-only (0400) files written
// from the captured bytes, never from the source folder.
type Staging struct {
	dir  string
	snap *Snapshot
}

// Dir is the staging directory's absolute path.
func (s *Staging) Dir() string { return s.dir }

// Stage writes snap into dir as read-only files in directories sealed
// read-only. Call Verify on it immediately before use. dir is either missing (it is created, 0700)
// or an empty 0700 directory the caller prepared. The caller must Remove
// it when the attempt ends.
func Stage(snap *Snapshot, dir string) (*Staging, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fail("stage", "", "%w", err)
	}
	if err := os.Mkdir(abs, 0o700); errors.Is(err, fs.ErrExist) {
		if err := checkEmptyPrivate(abs); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, fail("stage", "", "create staging directory: %w", err)
	}
	st := &Staging{dir: abs, snap: snap}
	for _, f := range snap.files {
		if err := st.write(f); err != nil {
			st.Remove()
			return nil, err
		}
	}
	if err := st.seal(); err != nil {
		st.Remove()
		return nil, err
	}
	return st, nil
}

func checkEmptyPrivate(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fail("stage", "", "%w", err)
	}
	if !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		return fail("stage", "", "%s is not a private (0700) directory", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) > 0 {
		return fail("stage", "", "%s is not an empty directory", dir)
	}
	return nil
}

// seal makes every staged directory read-only (0500), deepest first, so a
// script cannot add files next to its own code.
func (s *Staging) seal() error {
	var dirs []string
	filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Chmod(dirs[i], 0o500); err != nil {
			return fail("stage", "", "seal: %w", err)
		}
	}
	return nil
}

func (s *Staging) write(f File) error {
	target := filepath.Join(s.dir, filepath.FromSlash(f.Path))
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return fail("stage", f.Path, "%w", err)
	}
	// O_EXCL|O_NOFOLLOW: the directory is fresh and private, so anything
	// already at target means interference; refuse rather than overwrite.
	fd, err := unix.Open(target, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o400)
	if err != nil {
		return fail("stage", f.Path, "create: %w", err)
	}
	file := os.NewFile(uintptr(fd), target)
	if err := unix.Fchmod(fd, 0o400); err != nil { // the umask may have narrowed it
		file.Close()
		return fail("stage", f.Path, "chmod: %w", err)
	}
	_, werr := file.Write(f.data)
	cerr := file.Close()
	if werr != nil || cerr != nil {
		return fail("stage", f.Path, "write: %w", errors.Join(werr, cerr))
	}
	return nil
}

// Verify re-reads the staged directory with safe opens and confirms that it
// holds exactly the snapshot's files, with the snapshot's revision, as
// read-only files in private read-only directories. Call it immediately
// before launch.
func (s *Staging) Verify() error {
	var found []string
	err := filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(s.dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if info.Mode().Perm() != 0o500 {
				return fail("staging_tampered", filepath.ToSlash(rel), "directory mode %v, want 0500", info.Mode().Perm())
			}
		case d.Type().IsRegular():
			if info.Mode().Perm() != 0o400 {
				return fail("staging_tampered", filepath.ToSlash(rel), "file mode %v, want 0400", info.Mode().Perm())
			}
			found = append(found, filepath.ToSlash(rel))
		default:
			return fail("staging_tampered", filepath.ToSlash(rel), "unexpected %v in staging", d.Type())
		}
		return nil
	})
	if err != nil {
		var ae *Error
		if errors.As(err, &ae) {
			return ae
		}
		return fail("staging_tampered", "", "walk staging: %w", err)
	}
	if len(found) != len(s.snap.files) {
		return fail("staging_tampered", "", "staging holds %d files, snapshot has %d", len(found), len(s.snap.files))
	}
	again, err := capturePaths(s.dir, s.snap.Paths())
	if err != nil {
		return fail("staging_tampered", "", "re-read staging: %w", err)
	}
	if again.revision != s.snap.revision {
		return fail("revision_mismatch", "", "staged bytes hash to %s, want %s", again.revision, s.snap.revision)
	}
	return nil
}

// Remove deletes the staging directory.
func (s *Staging) Remove() error {
	if err := RemoveTree(s.dir); err != nil {
		return fail("stage", "", "remove %s: %w", s.dir, err)
	}
	return nil
}

// RemoveTree deletes dir and everything below it, first giving the owner
// write permission on every directory (staging directories are sealed
// read-only). Symlinks are never followed.
func RemoveTree(dir string) error {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// SweepLeftovers deletes the entries of runsDir for which stale reports
// true (those left by a process that crashed; a live process's staging is
// kept). Leftovers are only ever deleted, never executed. It returns the
// names it removed.
func SweepLeftovers(runsDir string, stale func(name string) bool) ([]string, error) {
	entries, err := os.ReadDir(runsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("artifact: sweep %s: %w", runsDir, err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		if !stale(e.Name()) {
			continue
		}
		if err := RemoveTree(filepath.Join(runsDir, e.Name())); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, e.Name())
	}
	if len(errs) > 0 {
		return removed, fmt.Errorf("artifact: sweep %s: %w", runsDir, errors.Join(errs...))
	}
	return removed, nil
}
