package app

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// digestFile marks which embedded bundle set an extracted copy holds.
const digestFile = ".gatehouse-digest"

// extractBundled makes sure dir holds exactly the bundles embedded in this
// binary. The bundles are embedded (rather than read next to the
// executable) so the desktop app works wherever it is installed; they are
// written to disk because discovery and capture work on real files with
// safe opens. An up-to-date copy is left alone; a stale one is replaced
// whole via rename, so readers never see a half-written set.
func extractBundled(src fs.FS, dir string) error {
	digest, err := fsDigest(src)
	if err != nil {
		return fmt.Errorf("bundled skills: %w", err)
	}
	if cur, err := os.ReadFile(filepath.Join(dir, digestFile)); err == nil && string(cur) == digest {
		return nil
	}
	tmp := dir + ".tmp-" + randomSuffix()
	if err := writeTree(src, tmp); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("bundled skills: %w", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, digestFile), []byte(digest), 0o644); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("bundled skills: %w", err)
	}
	old := dir + ".old-" + randomSuffix()
	if err := os.Rename(dir, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		os.RemoveAll(tmp)
		return fmt.Errorf("bundled skills: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("bundled skills: %w", err)
	}
	return os.RemoveAll(old)
}

func writeTree(src fs.FS, dst string) error {
	return fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dst, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !strings.Contains(p, "/") {
			return nil // top-level files (the Go embed source) are not bundles
		}
		data, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

func fsDigest(src fs.FS) (string, error) {
	h := sha256.New()
	err := fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%d:%s%d:", len(p), p, len(data))
		h.Write(data)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil)), err
}

func randomSuffix() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
