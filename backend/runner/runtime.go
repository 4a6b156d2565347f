// Package runner launches checked skill scripts. This file holds the Node
// runtime pin: the absolute path, version and SHA-256 of the Node binary
// that skill scripts run under, fixed at first start and rechecked before
// use so that a later change to PATH or to the binary never changes what
// runs.
package runner

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Pin identifies the Node runtime skill scripts run under.
type Pin struct {
	Path     string    `json:"path"`
	Version  string    `json:"version"`
	SHA256   string    `json:"sha256"`
	PinnedAt time.Time `json:"pinned_at"`
}

// FindNode returns the Node binary to pin at first start: the value of
// GATEHOUSE_NODE when set (it must be an absolute path), else "node" looked
// up on PATH. It is used only when nothing is pinned yet; launches never
// consult PATH.
func FindNode(getenv func(string) string) (string, error) {
	if p := getenv("GATEHOUSE_NODE"); p != "" {
		if !filepath.IsAbs(p) {
			return "", fmt.Errorf("runner: GATEHOUSE_NODE=%q must be an absolute path", p)
		}
		return p, nil
	}
	p, err := exec.LookPath("node")
	if err != nil {
		return "", fmt.Errorf("runner: no Node runtime found on PATH (install Node.js 20+ or set GATEHOUSE_NODE): %w", err)
	}
	return filepath.Abs(p)
}

// PinNode resolves path to the real binary (following symlinks once, now),
// hashes it and asks it for its version with an empty environment. It
// starts the version check with os/exec, so it must not be used while a
// proctree.Supervisor owns this process's children; use Runner.Pin then.
func PinNode(ctx context.Context, path string) (Pin, error) {
	return pinWith(ctx, path, func(ctx context.Context, real string) (string, error) {
		cmd := exec.CommandContext(ctx, real, "--version")
		cmd.Env = []string{}
		var out bytes.Buffer
		cmd.Stdout = &out
		err := cmd.Run()
		return out.String(), err
	})
}

func pinWith(ctx context.Context, path string, version func(context.Context, string) (string, error)) (Pin, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return Pin{}, fmt.Errorf("runner: pin %s: %w", path, err)
	}
	real, err = filepath.Abs(real)
	if err != nil {
		return Pin{}, fmt.Errorf("runner: pin %s: %w", path, err)
	}
	sum, err := hashExecutable(real)
	if err != nil {
		return Pin{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := version(ctx, real)
	if err != nil {
		return Pin{}, fmt.Errorf("runner: pin %s: %s --version: %w", path, real, err)
	}
	v := strings.TrimSpace(out)
	if !strings.HasPrefix(v, "v") || len(v) > 32 {
		return Pin{}, fmt.Errorf("runner: pin %s: unexpected version output %q", path, v)
	}
	return Pin{Path: real, Version: v, SHA256: sum, PinnedAt: time.Now().UTC()}, nil
}

// Check confirms the pinned file is still there, still a regular
// executable file, and still has the pinned SHA-256.
func (p Pin) Check() error {
	if p.Path == "" || !filepath.IsAbs(p.Path) {
		return errors.New("runner: no Node runtime is pinned")
	}
	sum, err := hashExecutable(p.Path)
	if err != nil {
		return err
	}
	if sum != p.SHA256 {
		return p.changed(sum)
	}
	return nil
}

// changed is the error of the pinned file hashing to sum instead.
func (p Pin) changed(sum string) error {
	return fmt.Errorf("runner: pinned Node runtime %s changed (sha256 %s, pinned %s); re-pin it in settings", p.Path, sum[:12], p.SHA256[:min(12, len(p.SHA256))])
}

func hashExecutable(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return "", fmt.Errorf("runner: Node runtime: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("runner: Node runtime: %w", err)
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("runner: Node runtime %s is not an executable regular file", path)
	}
	return hashOpen(f)
}

// hashOpen is the SHA-256 of what f holds from its current offset on.
func hashOpen(f *os.File) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("runner: Node runtime: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// fileIdentity is what must stay the same for a verified runtime binary to
// be trusted again without re-hashing: any write, chmod, rename or
// replacement changes the inode or the change time.
type fileIdentity struct {
	dev, ino, size   uint64
	mtimeNs, ctimeNs int64
}

func identityOf(path string) (fileIdentity, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return fileIdentity{}, err
	}
	return fileIdentity{dev: uint64(st.Dev), ino: st.Ino, size: uint64(st.Size), mtimeNs: st.Mtim.Nano(), ctimeNs: st.Ctim.Nano()}, nil
}
