package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// DataDir returns the data directory: $GATEHOUSE_DATA_DIR, else
// $XDG_DATA_HOME/gatehouse, else ~/.local/share/gatehouse. Relative values
// are refused rather than resolved against the working directory.
func DataDir(getenv func(string) string) (string, error) {
	if d := getenv("GATEHOUSE_DATA_DIR"); d != "" {
		if !filepath.IsAbs(d) {
			return "", fmt.Errorf("GATEHOUSE_DATA_DIR=%q must be an absolute path", d)
		}
		return filepath.Clean(d), nil
	}
	if x := getenv("XDG_DATA_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "gatehouse"), nil
	}
	home := getenv("HOME")
	if home == "" || !filepath.IsAbs(home) {
		return "", errors.New("cannot find a data directory: set GATEHOUSE_DATA_DIR or HOME")
	}
	return filepath.Join(home, ".local", "share", "gatehouse"), nil
}

// EnsureDataDir creates dir with mode 0700 if it is missing. An existing
// directory must be a real directory (not a symlink), owned by this user and
// closed to group and others; anything else is an error, not silently
// "fixed", because the directory holds consent state and run staging.
func EnsureDataDir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("data directory: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("data directory %s is not a directory (symlinks are not followed)", dir)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("data directory %s has mode %04o; it must be private: chmod 700 %s", dir, perm, dir)
	}
	if uid, ok := ownerUID(fi); ok && uid != os.Getuid() {
		return fmt.Errorf("data directory %s is owned by uid %d, not by this user (uid %d)", dir, uid, os.Getuid())
	}
	return nil
}
