package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gatehouse/gatehouse/backend/proctree"
)

// checkRuntime rechecks the pinned runtime before a launch: its SHA-256
// and its --version output must still match the pin. The full check runs
// the first time in this process and whenever the file's identity (inode,
// size, modification and change times) differs from the last verified
// one; an unchanged identity means unchanged bytes, because every write,
// chmod or replacement moves the change time.
func (r *Runner) checkRuntime(ctx context.Context, pin Pin) error {
	id, err := identityOf(pin.Path)
	if err != nil {
		return fmt.Errorf("pinned runtime %s: %w", pin.Path, err)
	}
	r.mu.Lock()
	last, ok := r.verified[pin.Path]
	r.mu.Unlock()
	if ok && last == id {
		return nil
	}
	if err := pin.Check(); err != nil {
		return err
	}
	version, err := r.output(ctx, pin.Path, "--version")
	if err != nil {
		return fmt.Errorf("pinned runtime %s: %w", pin.Path, err)
	}
	if strings.TrimSpace(version) != pin.Version {
		return fmt.Errorf("pinned runtime %s reports %q, pinned %q", pin.Path, strings.TrimSpace(version), pin.Version)
	}
	r.mu.Lock()
	r.verified[pin.Path] = id
	r.mu.Unlock()
	return nil
}

// Pin pins the Node binary at path (see PinNode), starting the version
// check through this runner's supervisor.
func (r *Runner) Pin(ctx context.Context, path string) (Pin, error) {
	return pinWith(ctx, path, func(ctx context.Context, real string) (string, error) { return r.output(ctx, real, "--version") })
}

// output runs a short helper command through the supervisor (the only
// owner of child waits) and returns up to 4 KiB of its stdout.
func (r *Runner) output(ctx context.Context, prog string, args ...string) (string, error) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return "", err
	}
	defer devnull.Close()
	rd, wr, err := os.Pipe()
	if err != nil {
		return "", err
	}
	defer rd.Close()
	marker := "GATEHOUSE_HELPER=" + newID()
	tree, err := r.cfg.Supervisor.Start(proctree.Spec{
		Path: prog, Args: append([]string{prog}, args...), Env: []string{"PATH=" + minimalPath, marker},
		Dir: "/", Files: []*os.File{devnull, wr, devnull}, Marker: marker,
	})
	wr.Close()
	if err != nil {
		return "", err
	}
	out, _ := io.ReadAll(io.LimitReader(rd, 4096))
	select {
	case <-tree.Exited():
	case <-ctx.Done():
	}
	tree.Terminate(proctree.Grace)
	<-tree.Exited()
	if code, sig := tree.ExitStatus(); code != 0 || sig != "" {
		return "", fmt.Errorf("%s exited with %d %s", prog, code, sig)
	}
	return string(out), nil
}
