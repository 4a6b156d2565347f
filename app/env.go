package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"

	"github.com/gatehouse/gatehouse/backend/artifact"
	"github.com/gatehouse/gatehouse/backend/bundle"
	"github.com/gatehouse/gatehouse/backend/capture"
	"github.com/gatehouse/gatehouse/backend/library"
	"github.com/gatehouse/gatehouse/backend/policy"
	"github.com/gatehouse/gatehouse/backend/proctree"
	"github.com/gatehouse/gatehouse/backend/runner"
	"github.com/gatehouse/gatehouse/backend/skills"
	"github.com/gatehouse/gatehouse/backend/store"
	"github.com/gatehouse/gatehouse/bundles"
)

// Settings keys in the app-settings namespace.
const (
	nsApp          = "app-settings"
	keySkillRoots  = "skill_roots"
	keyNodeRuntime = "node_runtime"
	// keyNodeKnown is the identity the pinned runtime had when it last
	// hashed to its pin (runner.KnownIdentity).
	keyNodeKnown = "node_runtime_known_identity"
)

// IO is the process's standard streams, environment and terminal, passed
// in so the CLI can be driven from tests. The terminal hooks may be nil:
// then the real terminal is used (see terminal.go).
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string

	// OpenTerminal opens the controlling terminal on which the person
	// answers consent prompts; an error means there is none (then only a
	// trusted scope can authorize a run). Nil opens /dev/tty.
	OpenTerminal func() (io.ReadWriteCloser, error)
	// IsTerminal reports whether w is a terminal, which decides whether
	// progress and summaries are written to it. Nil asks the kernel
	// whether w is an *os.File on a terminal device.
	IsTerminal func(w io.Writer) bool
}

// Env is an opened data directory: the database, the runtime pin and the
// skill roots. Commands that need state open one and Close it.
type Env struct {
	IO
	DataDir string
	DB      *store.DB
	Pin     *runner.Pin
	PinErr  error

	runtimeOnce sync.Once
	inspected   bundle.InspectCache      // content-keyed inspection results (cmd_skill.go)
	documents   skills.DocumentCache     // content-keyed SKILL.md parses (cmd_skill.go)
	verifier    library.ExecutableDigest // this executable's SHA-256 (Evidence verification marks)
	libMu       sync.Mutex
	evlib       *library.Library // the evidence library (lib)
	runtimeErr  error

	snapshotsOnce sync.Once
	snapshots     *capture.RendererSnapshots // RendererSnapshots
}

// openEnv resolves and prepares the data directory, opens the database,
// deletes staging leftovers of a crashed run (never executing them),
// extracts the bundled skills and pins the Node runtime on first start.
func openEnv(ctx context.Context, io IO) (*Env, error) {
	dir, err := DataDir(io.Getenv)
	if err != nil {
		return nil, errorf("data_dir", CategoryIO, "%v", err)
	}
	if err := EnsureDataDir(dir); err != nil {
		return nil, errorf("data_dir", CategoryIO, "%v", err)
	}
	db, err := store.Open(filepath.Join(dir, store.FileName))
	if err != nil {
		return nil, errorf("database", CategoryIO, "%v", err)
	}
	e := &Env{IO: io, DataDir: dir, DB: db}
	// A crashed instance may have left script processes and staging behind:
	// end the processes first, then delete (never execute) the staging.
	proctree.SweepCgroups()
	for _, pid := range proctree.SweepStale("HOME", e.RunsDir()) {
		fmt.Fprintf(io.Stderr, "gatehouse: ended process %d left by a crashed run\n", pid)
	}
	if _, err := artifact.SweepLeftovers(e.RunsDir(), proctree.Stale); err != nil {
		fmt.Fprintf(io.Stderr, "gatehouse: warning: %v\n", err)
	}
	if n, err := reconcileInterrupted(ctx, db); err != nil {
		fmt.Fprintf(io.Stderr, "gatehouse: warning: recording interrupted attempts: %v\n", err)
	} else if n > 0 {
		fmt.Fprintf(io.Stderr, "gatehouse: %s left by a crashed instance recorded as interrupted (see `gatehouse runs`)\n", plural(n, "attempt"))
	}
	if err := extractBundled(bundles.FS(), e.BundledDir()); err != nil {
		db.Close()
		return nil, errorf("bundled_skills", CategoryIO, "%v", err)
	}
	e.Pin, e.PinErr = e.ensurePin(ctx)
	return e, nil
}

// Close releases the database.
func (e *Env) Close() error { return e.DB.Close() }

// PolicyStore is the execution policy store of this data directory, its
// receipts keyed by the data directory's receipt key (created on first
// use, mode 0600, outside the SQLite file). When the key cannot be read
// the store still opens, with a warning: no receipt verifies then, so a
// stored trusted scope fails closed and the reason shows in Security.
func (e *Env) PolicyStore() *policy.Store {
	key, err := policy.LoadReceiptKey(filepath.Join(e.DataDir, policy.ReceiptKeyFile))
	if err != nil {
		fmt.Fprintf(e.Stderr, "gatehouse: warning: %v\n", err)
	}
	return policy.NewStore(e.DB, nil, key)
}

// RunsDir is where per-attempt staging lives.
func (e *Env) RunsDir() string { return filepath.Join(e.DataDir, "runs") }

// BundledDir is where the embedded example bundles are extracted.
func (e *Env) BundledDir() string { return filepath.Join(e.DataDir, "bundled") }

// ensurePin returns the pinned runtime, pinning what FindNode finds when
// nothing is pinned yet. A missing Node is not fatal: inspection reports
// scripts as unavailable and doctor says what to do.
func (e *Env) ensurePin(ctx context.Context) (*runner.Pin, error) {
	raw, err := e.DB.Get(ctx, nsApp, keyNodeRuntime)
	if err == nil {
		var p runner.Pin
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, fmt.Errorf("stored runtime pin is unreadable: %w", err)
		}
		return &p, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	path, err := runner.FindNode(e.Getenv)
	if err != nil {
		return nil, err
	}
	p, err := runner.PinNode(ctx, path)
	if err != nil {
		return nil, err
	}
	b, _ := json.Marshal(p)
	if err := e.DB.Put(ctx, nsApp, keyNodeRuntime, b); err != nil {
		return nil, err
	}
	return &p, nil
}

// RuntimeCheck reports whether the pinned runtime still checks out, once
// per process; nil when nothing is pinned. Its SHA-256 is recomputed
// unless the file still has the identity (device, inode, size,
// modification and change time) it had when it last hashed to the pin,
// kept in the database (runner.Pin.CheckKnown): hashing the ~100 MB
// binary on every command cost ~110 ms.
func (e *Env) RuntimeCheck() func() error {
	if e.Pin == nil {
		return nil
	}
	return func() error {
		e.runtimeOnce.Do(func() { e.runtimeErr = e.checkPinKnown(context.Background()) })
		return e.runtimeErr
	}
}

// checkPinKnown is e.Pin.CheckKnown with the identity kept in the
// database; an unreadable kept identity only means hashing again.
func (e *Env) checkPinKnown(ctx context.Context) error {
	var known *runner.KnownIdentity
	if raw, err := e.DB.Get(ctx, nsApp, keyNodeKnown); err == nil {
		var k runner.KnownIdentity
		if json.Unmarshal(raw, &k) == nil {
			known = &k
		}
	}
	next, err := e.Pin.CheckKnown(known)
	if err != nil {
		return err
	}
	if next != nil && (known == nil || *next != *known) {
		b, _ := json.Marshal(next)
		if err := e.DB.Put(ctx, nsApp, keyNodeKnown, b); err != nil && e.Stderr != nil {
			fmt.Fprintf(e.Stderr, "gatehouse: warning: keeping the runtime's identity: %v\n", err)
		}
	}
	return nil
}

// verifierID is this executable's SHA-256 for the verification marks,
// once per process, not hashed again while the executable keeps the
// identity it had when it last hashed, kept in the database
// (library.ExecutableDigest.IDKnown): hashing it cost ~25-40 ms on every
// command that saves or reads Evidence.
func (e *Env) verifierID() string {
	if e.DB == nil {
		return e.verifier.ID()
	}
	return e.verifier.IDKnown(e.DB)
}

// UserRoots returns the skill roots added in settings, in order.
func (e *Env) UserRoots(ctx context.Context) ([]string, error) {
	raw, err := e.DB.Get(ctx, nsApp, keySkillRoots)
	if errors.Is(err, store.ErrNotFound) {
		return []string{}, nil
	}
	if err != nil {
		return nil, err
	}
	var roots []string
	if err := json.Unmarshal(raw, &roots); err != nil {
		return nil, fmt.Errorf("stored skill roots are unreadable: %w", err)
	}
	return roots, nil
}

// Roots returns every skill root in precedence order: the bundled root
// first, then the settings roots; later roots win.
func (e *Env) Roots(ctx context.Context) ([]skills.Root, error) {
	user, err := e.UserRoots(ctx)
	if err != nil {
		return nil, err
	}
	roots := []skills.Root{{Path: e.BundledDir(), Origin: "bundled"}}
	for _, r := range user {
		roots = append(roots, skills.Root{Path: r, Origin: "settings"})
	}
	return roots, nil
}
