package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/backend/artifact"
	"github.com/gatehouse/gatehouse/backend/bundle"
	"github.com/gatehouse/gatehouse/backend/confine"
	"github.com/gatehouse/gatehouse/backend/internal/contentcache"
	"github.com/gatehouse/gatehouse/backend/proctree"
	"github.com/gatehouse/gatehouse/backend/store"
)

// MaxStderrBytes bounds a script's diagnostics; more fails the attempt as
// output_limit.
const MaxStderrBytes = 16 << 10

// Every attempt's cgroup is given these limits where the machine's cgroup
// v2 has the controllers (the envelope's cleanup.limits says which
// applied): a fork bomb stops at MaxTasks processes and threads (a Node
// process has about a dozen threads), a memory bomb at MaxMemoryBytes.
const (
	MaxTasks       = 1024
	MaxMemoryBytes = 2 << 30
)

// minimalPath is the only PATH a script sees.
const minimalPath = "/usr/local/bin:/usr/bin:/bin"

// Config holds a Runner's dependencies.
type Config struct {
	Supervisor *proctree.Supervisor
	// RunsDir is the data directory's runs/ folder.
	RunsDir string
	Journal *Journal
	History History
	// Confinement is the default Security setting for requests that carry
	// none (zero value: confine.Default(), workspace + deny).
	Confinement confine.Settings
	// Settings, when set, reads the current Security setting for each
	// attempt that carries none (it overrides Confinement); an error
	// refuses the attempt.
	Settings func(ctx context.Context) (confine.Settings, error)
	// Ownership caps the process-tree ownership mechanism: "" (the
	// strongest the supervisor can make, a PID namespace per attempt),
	// proctree.MechanismCgroup or proctree.MechanismSubreaper. Tests use it
	// to force each mechanism.
	Ownership string
	// LandlockABILimit, when non-nil, makes confinement treat the kernel's
	// Landlock ABI as at most this (a test seam simulating older kernels).
	LandlockABILimit *int
}

// Runner launches checked attempts. It is safe for concurrent use.
type Runner struct {
	cfg Config

	mu       sync.Mutex
	verified map[string]fileIdentity                     // runtime path → identity last verified
	schemas  *contentcache.Cache[string, *bundle.Schema] // compiled schemas by (root kind, JSON bytes)
}

// maxSchemas bounds the compiled-schema cache; past it, the oldest
// schema compiled is forgotten.
const maxSchemas = 256

// schema is bundle.CompileSchema, reusing the compiled schema of identical
// JSON bytes: a compiled schema is a pure function of them (and of
// inputRoot) and safe for concurrent use, and compiling the two schemas of
// an attempt took about 0.8 ms of its start here. Only successful
// compilations are kept.
func (r *Runner) schema(v *bundle.Value, inputRoot bool) (*bundle.Schema, []bundle.Issue) {
	if v == nil {
		return bundle.CompileSchema(v, inputRoot)
	}
	raw, _ := v.MarshalJSON()
	key := fmt.Sprintf("%t:%s", inputRoot, raw)
	if s, ok := r.schemas.Get(key); ok {
		return s, nil
	}
	s, is := bundle.CompileSchema(v, inputRoot)
	if len(is) == 0 {
		r.schemas.Add(key, s, 0)
	}
	return s, is
}

// New returns a Runner.
func New(cfg Config) (*Runner, error) {
	if cfg.Supervisor == nil || cfg.RunsDir == "" || cfg.Journal == nil {
		return nil, errors.New("runner: Supervisor, RunsDir and Journal are required")
	}
	if err := os.MkdirAll(cfg.RunsDir, 0o700); err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	if cfg.Confinement == (confine.Settings{}) {
		cfg.Confinement = confine.Default()
	}
	if err := cfg.Confinement.Validate(); err != nil {
		return nil, fmt.Errorf("runner: confinement %w", err)
	}
	switch cfg.Ownership {
	case "", proctree.MechanismCgroup, proctree.MechanismSubreaper:
	default:
		return nil, fmt.Errorf("runner: unknown ownership mechanism %q", cfg.Ownership)
	}
	r := &Runner{cfg: cfg, verified: map[string]fileIdentity{}, schemas: contentcache.New[string, *bundle.Schema](contentcache.Limits{MaxEntries: maxSchemas})}
	return r, nil
}

// Close releases the runner. Attempts must have ended.
func (r *Runner) Close() error { return nil }

// A receiver folder holds one attempt: bundle/ (the staging copy), home/
// and tmp/. It is made at launch for that attempt only, under a random
// name, and deleted afterwards; no receiver is prepared ahead of time, so
// none can be planted in by an earlier attempt.
func (r *Runner) makeReceiver() (string, error) {
	dir := filepath.Join(r.cfg.RunsDir, r.cfg.Supervisor.Instance().Tag()+"."+newID())
	for _, d := range []string{dir, filepath.Join(dir, "bundle"), filepath.Join(dir, "home"), filepath.Join(dir, "tmp")} {
		if err := os.Mkdir(d, 0o700); err != nil {
			artifact.RemoveTree(dir)
			return "", fmt.Errorf("runner: prepare receiver: %w", err)
		}
	}
	return dir, nil
}

// Request is one approved attempt.
type Request struct {
	RunID        string
	Skill        string
	Agent        string
	AuthorizedBy string
	// Snapshot and Manifest come from a passing inspection.
	Snapshot   *artifact.Snapshot
	Manifest   *bundle.Manifest
	Invocation []byte
	Workspace  Workspace
	Pin        Pin
	// Authorize rechecks policy and consumes the consent immediately
	// before spawn; an error refuses the attempt (with the error's
	// RefusalCode() when it has one), and the history then records the
	// refusing check (the error's RefusalRule() when it has one, else
	// "launch check: <code>") instead of AuthorizedBy, which held only
	// while the check passed. Nil means nothing to recheck.
	Authorize func(ctx context.Context) error
	// OnProgress receives accepted fd 3 progress reports.
	OnProgress func(Progress)
	// Confinement is the Security setting for this attempt (zero value:
	// the runner's default).
	Confinement confine.Settings
	// RequireConfinement, when non-nil, refuses the attempt unless its
	// launch enforces at least what this report enforced (a trusted scope
	// does not match a run with weaker confinement).
	RequireConfinement *confine.Report
}

// Result is an envelope plus the script's diagnostics (shown to people,
// never parsed, never part of the envelope).
type Result struct {
	Envelope Envelope
	Stderr   string
}

// attempt carries one Run's state.
type attempt struct {
	r     *Runner
	req   Request
	env   Envelope
	start time.Time
	dir   string
}

// Run executes exactly one attempt and records it. It never retries.
func (r *Runner) Run(ctx context.Context, req Request) Result {
	a := &attempt{r: r, req: req, start: time.Now(), env: Envelope{
		RunID: req.RunID, AttemptID: newID(), Runtime: RuntimeInfo{Path: req.Pin.Path, Version: req.Pin.Version},
		Errors: []bundle.Issue{}, ExecutionReceiver: receiver,
	}}
	if req.Snapshot != nil {
		a.env.Revision = req.Snapshot.Revision()
	}
	stderr := a.run(ctx)
	a.env.ElapsedMs = time.Since(a.start).Milliseconds()
	if a.dir != "" {
		artifact.RemoveTree(a.dir)
	}
	// Recorded before "completed" is announced, so a subscriber that reacts
	// to the event finds the attempt in the history.
	r.record(ctx, a, stderr)
	a.emit(ctx, EventCompleted, map[string]any{"status": a.env.Status})
	return Result{Envelope: a.env, Stderr: stderr}
}

func (a *attempt) refuse(code, path, msg string) string {
	a.env.Status = StatusRefused
	a.env.fail(code, path, msg)
	return ""
}

func (a *attempt) emit(ctx context.Context, typ string, detail any) {
	var raw json.RawMessage
	if detail != nil {
		raw, _ = json.Marshal(detail)
	}
	a.r.cfg.Journal.Emit(ctx, Event{Type: typ, RunID: a.req.RunID, AttemptID: a.env.AttemptID, Agent: a.req.Agent,
		Skill: a.req.Skill, Revision: a.env.Revision, Detail: raw})
}

func (a *attempt) run(ctx context.Context) (stderr string) {
	req := a.req
	if err := ctx.Err(); err != nil {
		a.env.Status = StatusCancelled
		a.env.fail(CodeCancelled, "$", "cancelled before the script started")
		return ""
	}
	if req.Snapshot == nil || req.Manifest == nil {
		return a.refuse(CodeUnavailable, "$", "no verified snapshot")
	}
	inSchema, is := a.r.schema(req.Manifest.InputSchema, true)
	if len(is) > 0 {
		return a.refuse(CodeUnavailable, "$.inputSchema", is[0].Message)
	}
	outSchema, is := a.r.schema(req.Manifest.OutputSchema, false)
	if len(is) > 0 {
		return a.refuse(CodeUnavailable, "$.outputSchema", is[0].Message)
	}
	if _, is := bundle.ValidateInvocation(inSchema, req.Invocation); len(is) > 0 {
		a.env.Status = StatusRefused
		for _, i := range is {
			a.env.fail(CodeInvalidInput+":"+i.Code, i.Path, i.Message)
		}
		return ""
	}

	if err := ctx.Err(); err != nil {
		a.env.Status = StatusCancelled
		a.env.fail(CodeCancelled, "$", "cancelled before the script started")
		return ""
	}
	// The confinement this kernel can enforce is known before consent is
	// consumed: a setting that cannot be met is refused, never downgraded.
	settings, err := a.r.settings(ctx, req)
	if err != nil {
		return a.refuse(confine.CodeUnavailable, "confinement", err.Error())
	}
	expect, err := a.r.Confinement(settings)
	if err != nil {
		return a.refuse(confine.CodeUnavailable, "confinement", err.Error())
	}
	if !expect.Covers(req.RequireConfinement) {
		return a.refuse(confine.CodeUnavailable, "confinement", "this run would be confined less than the trusted scope was approved under ("+expect.Summary()+")")
	}
	if req.Authorize != nil {
		if err := req.Authorize(ctx); err != nil {
			code := CodeNotAuthorized
			var rc interface{ RefusalCode() string }
			if errors.As(err, &rc) {
				code = rc.RefusalCode()
			}
			a.req.AuthorizedBy = "launch check: " + code
			var rr interface{ RefusalRule() string }
			if errors.As(err, &rr) {
				a.req.AuthorizedBy = rr.RefusalRule()
			}
			return a.refuse(code, "$", err.Error())
		}
	}

	// A fresh receiver: private attempt folder with the staged bundle and
	// an empty HOME and TMPDIR, tagged with this instance for sweeping.
	dir, err := a.r.makeReceiver()
	if err != nil {
		return a.refuse(CodeStagingFailed, "$", err.Error())
	}
	a.dir = dir
	home, tmp := filepath.Join(a.dir, "home"), filepath.Join(a.dir, "tmp")
	staging, err := artifact.Stage(req.Snapshot, filepath.Join(a.dir, "bundle"))
	if err != nil {
		return a.refuse(CodeStagingFailed, "$", err.Error())
	}
	// The instance tag lets the next start tell an attempt whose process
	// died (recorded then as interrupted) from one still running elsewhere.
	a.emit(ctx, EventStaged, map[string]any{"files": len(req.Snapshot.Paths()), "instance": a.r.cfg.Supervisor.Instance().Tag()})
	if err := a.r.checkRuntime(ctx, req.Pin); err != nil {
		return a.refuse(CodeRuntimeChanged, "runtime", err.Error())
	}
	if err := staging.Verify(); err != nil {
		return a.refuse(CodeStagingFailed, "$", err.Error())
	}
	if err := req.Workspace.Recheck(); err != nil {
		return a.refuse(CodeWorkspaceChanged, "workspace", err.Error())
	}
	return a.launch(ctx, staging, outSchema, settings, home, tmp)
}

func (r *Runner) settings(ctx context.Context, req Request) (confine.Settings, error) {
	if req.Confinement != (confine.Settings{}) {
		return req.Confinement, req.Confinement.Validate()
	}
	return r.CurrentConfinement(ctx)
}

// CurrentConfinement is the Security setting attempts get now.
func (r *Runner) CurrentConfinement(ctx context.Context) (confine.Settings, error) {
	if r.cfg.Settings == nil {
		return r.cfg.Confinement, nil
	}
	s, err := r.cfg.Settings(ctx)
	if err != nil {
		return confine.Settings{}, fmt.Errorf("the Security setting is unreadable: %w", err)
	}
	return s, s.Validate()
}

// Confinement reports what a launch with settings would enforce on this
// machine, or why it would be refused (a *confine.UnavailableError).
func (r *Runner) Confinement(settings confine.Settings) (*confine.Report, error) {
	limit := -1
	if r.cfg.LandlockABILimit != nil {
		limit = *r.cfg.LandlockABILimit
	}
	netns := settings.Network == confine.NetworkDeny && r.cfg.Supervisor.NetNamespaceUnavailable() == ""
	return confine.Check(settings, netns, limit)
}

// Ownership names the mechanism an attempt's tree will have and, when it
// cannot be verified, why.
func (r *Runner) Ownership() (mechanism, unverifiable string) {
	sup := r.cfg.Supervisor
	if r.cfg.Ownership == "" && sup.PIDNamespaceUnavailable() == "" {
		return proctree.MechanismPIDNamespace, ""
	}
	mech := sup.Mechanism()
	if r.cfg.Ownership == proctree.MechanismSubreaper && mech == proctree.MechanismCgroup {
		mech = proctree.MechanismSubreaper
	}
	if mech == proctree.MechanismProcessGroup {
		return mech, "this process is not a child subreaper, so a process that double-forks leaves the attempt's ancestry"
	}
	return mech, ""
}

// environment is the complete, fixed environment of a script.
func environment(runID, home, tmp string) []string {
	return []string{
		"PATH=" + minimalPath, "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "TZ=UTC",
		"HOME=" + home, "TMPDIR=" + tmp, "GATEHOUSE_RUN_ID=" + runID,
	}
}

func (a *attempt) launch(ctx context.Context, staging *artifact.Staging, outSchema *bundle.Schema, settings confine.Settings, home, tmp string) string {
	req := a.req
	pipes, err := newPipes()
	if err != nil {
		return a.refuse(CodeSpawnFailed, "$", err.Error())
	}
	defer pipes.closeAll()
	entry := filepath.Join(staging.Dir(), filepath.FromSlash(path.Clean(req.Manifest.Entrypoint)))
	sup := a.r.cfg.Supervisor
	netns := settings.Network == confine.NetworkDeny && sup.NetNamespaceUnavailable() == ""
	launch := confine.Request{
		Settings: settings, ABILimit: -1, NetNamespace: netns, UserNamespace: os.Geteuid() == 0,
		ReadOnly:  []string{staging.Dir(), runtimePrefix(req.Pin.Path)},
		ReadWrite: []string{req.Workspace.Path, home, tmp},
		Path:      req.Pin.Path, Args: []string{req.Pin.Path, entry}, Env: environment(req.RunID, home, tmp),
	}
	if a.r.cfg.LandlockABILimit != nil {
		launch.ABILimit = *a.r.cfg.LandlockABILimit
	}
	launcher, args, env, err := launch.Command()
	if err != nil {
		return a.refuse(CodeSpawnFailed, "$", err.Error())
	}
	tree, err := sup.Start(proctree.Spec{
		Path: launcher, Args: args, Env: env, Dir: req.Workspace.Path,
		Files: launch.Files(pipes.stdinR, pipes.stdoutW, pipes.stderrW, pipes.progressW, pipes.reportW),
		Name:  a.env.AttemptID, Unprivileged: true, OwnUserNamespace: launch.MakesUserNamespace(), Limits: proctree.Limits{Pids: MaxTasks, MemoryBytes: MaxMemoryBytes},
		PIDNamespace: a.r.cfg.Ownership == "", NetNamespace: netns, NoCgroup: a.r.cfg.Ownership == proctree.MechanismSubreaper,
	})
	if err != nil {
		return a.refuse(CodeSpawnFailed, "$", err.Error())
	}
	pipes.closeChildEnds()
	// The launcher reports what it enforced, then executes the runtime
	// (which closes the report pipe). Nothing of the script runs before
	// the report is read.
	rep, err := launch.ReadReport(pipes.reportR)
	if err != nil {
		cleanup := tree.Terminate(proctree.Grace)
		<-tree.Exited()
		a.env.Cleanup = &cleanup
		if confine.IsUnavailable(err) {
			return a.refuse(confine.CodeUnavailable, "confinement", err.Error())
		}
		return a.refuse(CodeSpawnFailed, "$", err.Error())
	}
	a.env.Confinement = rep
	a.emit(ctx, EventSpawned, map[string]any{"pid": tree.Pid(), "confinement": rep})

	limit := make(chan string, 2)
	stdout := newBoundedBuffer(req.Manifest.MaxOutputBytes, func() { limit <- CodeStdoutLimit })
	stderr := newBoundedBuffer(MaxStderrBytes, func() { limit <- CodeStderrLimit })
	prog := &progressReader{now: time.Now, emit: func(p Progress) {
		a.emit(ctx, EventProgress, p)
		if req.OnProgress != nil {
			req.OnProgress(p)
		}
	}}
	var readers sync.WaitGroup
	readers.Add(3)
	go func() { defer readers.Done(); io.Copy(stdout, pipes.stdoutR) }()
	go func() { defer readers.Done(); io.Copy(stderr, pipes.stderrR) }()
	go func() { defer readers.Done(); prog.run(pipes.progressR) }()
	go func() {
		// The script may exit without reading; a broken pipe is not ours to report.
		pipes.stdinW.Write(req.Invocation)
		pipes.stdinW.Close()
	}()

	timer := time.NewTimer(time.Duration(req.Manifest.TimeoutMs) * time.Millisecond)
	defer timer.Stop()
	var cause string
	select {
	case <-tree.Exited():
	case <-timer.C:
		cause = CodeTimeout
	case <-ctx.Done():
		cause = CodeCancelled
	case cause = <-limit:
	}
	cleanup := tree.Terminate(proctree.Grace)
	<-tree.Exited() // the supervisor reaps the root once it is gone
	code, sig := tree.ExitStatus()
	if sig != "" {
		a.env.Signal = &sig
	} else {
		a.env.ExitCode = &code
	}
	a.emit(ctx, EventExited, map[string]any{"exitCode": a.env.ExitCode, "signal": a.env.Signal})
	a.env.Cleanup = &cleanup
	if cleanup.Verified {
		// Every writer is gone, so the readers reach EOF.
		readers.Wait()
	} else {
		pipes.closeParentReads()
	}
	a.emit(ctx, EventCleaned, cleanup)
	if cause == "" {
		select { // a limit may have tripped just as the root exited
		case cause = <-limit:
		default:
		}
	}

	out, outOver, outBad := stdout.result()
	errText, _, _ := stderr.result()
	a.env.StderrBytes = len(errText)
	a.env.Progress = prog.summary()
	switch {
	case !cleanup.Verified:
		a.env.Status = StatusCleanupFailed
		a.env.fail(CodeCleanupFailed, "$", fmt.Sprintf("%d processes of the attempt may remain", len(cleanup.Remaining)))
	case cause == CodeCancelled:
		a.env.Status = StatusCancelled
		a.env.fail(CodeCancelled, "$", "cancelled while running")
	case cause == CodeTimeout:
		a.env.Status = StatusTimeout
		a.env.fail(CodeTimeout, "$", fmt.Sprintf("no result within %d ms", req.Manifest.TimeoutMs))
	case cause == CodeStdoutLimit || outOver:
		a.env.Status = StatusOutputLimit
		a.env.fail(CodeStdoutLimit, "$", fmt.Sprintf("stdout exceeded maxOutputBytes (%d)", req.Manifest.MaxOutputBytes))
	case cause == CodeStderrLimit:
		a.env.Status = StatusOutputLimit
		a.env.fail(CodeStderrLimit, "stderr", fmt.Sprintf("stderr exceeded %d bytes", MaxStderrBytes))
	case sig != "":
		a.env.Status = StatusFailed
		a.env.fail(CodeSignaled, "$", "the script was killed by "+sig)
	case code != 0:
		a.env.Status = StatusFailed
		a.env.fail(CodeNonzeroExit, "$", fmt.Sprintf("the script exited with status %d", code))
	case outBad:
		a.env.Status = StatusFailed
		a.env.fail("invalid_utf8", "$", "stdout is not valid UTF-8")
	default:
		v, is := bundle.ValidateResult(outSchema, out, req.Manifest.MaxOutputBytes)
		a.emit(ctx, EventValidated, map[string]any{"valid": len(is) == 0})
		if len(is) > 0 {
			a.env.Status = StatusFailed
			a.env.Errors = append(a.env.Errors, is...)
			break
		}
		a.env.Status = StatusSucceeded
		a.env.Output, _ = v.MarshalJSON()
	}
	return strings.ToValidUTF8(string(errText), "\uFFFD")
}

func (r *Runner) record(ctx context.Context, a *attempt, stderr string) {
	if r.cfg.History == nil {
		return
	}
	env, _ := json.Marshal(a.env)
	err := r.cfg.History.RecordRun(context.WithoutCancel(ctx), store.RunRecord{
		AttemptID: a.env.AttemptID, RunID: a.req.RunID, Skill: a.req.Skill, Revision: a.env.Revision,
		Agent: a.req.Agent, AuthorizedBy: a.req.AuthorizedBy, Status: string(a.env.Status), Envelope: env,
		Stderr: stderr, StartedAt: a.start, FinishedAt: time.Now(), ElapsedMs: a.env.ElapsedMs,
	})
	if err != nil && r.cfg.Journal.errs != nil {
		r.cfg.Journal.errs(err)
	}
}

// runtimePrefix is the installation directory of the runtime binary at
// path (the parent of its bin/), which a confined script may read.
func runtimePrefix(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	dir := filepath.Dir(path)
	if filepath.Base(dir) == "bin" {
		return filepath.Dir(dir)
	}
	return dir
}

func newID() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Refuse records an attempt that was refused before anything was staged
// (an unavailable bundle, a denied or missing consent) with the given
// issues, emits its completion, and returns its envelope.
func (r *Runner) Refuse(ctx context.Context, req Request, issues []bundle.Issue) Result {
	a := &attempt{r: r, req: req, start: time.Now(), env: Envelope{
		Status: StatusRefused, RunID: req.RunID, AttemptID: newID(), Runtime: RuntimeInfo{Path: req.Pin.Path, Version: req.Pin.Version},
		Errors: append([]bundle.Issue{}, issues...), ExecutionReceiver: receiver,
	}}
	if req.Snapshot != nil {
		a.env.Revision = req.Snapshot.Revision()
	}
	r.record(ctx, a, "")
	a.emit(ctx, EventCompleted, map[string]any{"status": a.env.Status})
	return Result{Envelope: a.env}
}

// NewRunID returns a fresh random run identifier.
func NewRunID() string { return newID() }
