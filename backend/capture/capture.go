package capture

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"time"

	"github.com/gatehouse/gatehouse/backend/policy"
	"github.com/gatehouse/gatehouse/backend/proctree"
)

// TimeLayout is the RFC 3339 form of started_at and completed_at: UTC with
// exactly three fractional digits, so the strings order like the times.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// Options configure one Capture.
type Options struct {
	// Policy is the operator policy, checked before anything is launched.
	// Its zero value has capture disabled, so every capture is refused.
	Policy policy.CaptureSettings
	// GatehouseVersion and ProviderVersion go into the manifest.
	GatehouseVersion string
	ProviderVersion  string
	// TempDir is where the temporary root is made ("" = os.TempDir()).
	TempDir string
	// LookupEnv reads Gatehouse's environment for inherit_environment
	// (nil = os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// Now is the wall clock of started_at and completed_at (nil = time.Now).
	Now func() time.Time
	// Node is the absolute path of the pinned Node runtime, which runs
	// the renderer helper (xterm.js) that renders rendered_frames; a
	// capture without it is refused before launch.
	Node string
	// NodeSHA256 is the pinned Node's SHA-256 and Snapshots keeps the
	// renderer helper's startup snapshots (RendererHelper): with both, a
	// helper this capture starts itself starts from a verified snapshot.
	NodeSHA256 string
	Snapshots  *RendererSnapshots
	// Renderers, when set, supplies the renderer helper instead: one
	// started ahead (run with its own Node and Supervisor), so the
	// capture does not wait for Node to start (renderers.go).
	Renderers *Renderers
	// RunID is the value of GATEHOUSE_PROCESS_RUN_ID in the target's
	// environment ("" = crypto/rand.Text()). It must be unique among live
	// captures.
	RunID string
}

// PolicyError is a capture refused by the operator policy; Reason is one
// of the policy.Reason* constants.
type PolicyError struct {
	Reason  string
	Message string
}

func (e *PolicyError) Error() string {
	return fmt.Sprintf("capture refused by operator policy (%s): %s", e.Reason, e.Message)
}

// ErrCleanupIncomplete is wrapped by the error Capture returns, together
// with the record, when the owned tree could not be verified gone or the
// temporary root could not be removed.
var ErrCleanupIncomplete = errors.New("capture cleanup incomplete")

// Capture runs sc.Executable with sc.Arguments in a new PTY owned by sup
// and records what it did (docs/formats/capture-record.md). The target gets
// sc.WorkingDirectory, a fresh temporary HOME, TERM=xterm-256color, the
// scenario's environment, the inherited names that are set, and
// GATEHOUSE_PROCESS_RUN_ID; nothing else, except that with command shims
// the shim directory is first on PATH and GATEHOUSE_SHIM_LEDGER_URL is set.
//
// Before launch it refuses (with a *PolicyError) what opts.Policy does not
// allow, judging paths with their symlinks resolved (policy.ResolveCapture);
// it then executes, enters and walks exactly the resolved paths, and (with a *PreflightError) reactive graphs using what the
// engine refuses; reactive runs are described at reactiveRun
// (reactive_run.go).
// Loopback replay is described in backend/loopback (the target also
// gets GATEHOUSE_REPLAY_HTTP_URL and GATEHOUSE_REPLAY_WEBSOCKET_URL then).
// Filesystem checkpoints are described at checkpoints, command
// shims at the top of shim.go. After launch it
// streams output into raw and rendered frames within the limits, dispatches
// the timed events, stops the tree at timeout_ms or idle_timeout_ms, waits
// for settlement after the root exits, and always ends every member of
// the tree and removes the temporary root, also when ctx is cancelled
// (then it returns ctx's error and no record). When cleanup cannot be
// verified it returns the record together with an error wrapping
// ErrCleanupIncomplete.
func Capture(ctx context.Context, sup *proctree.Supervisor, sc *Scenario, opts Options) (*Record, error) {
	if sup == nil || sc == nil {
		return nil, errors.New("capture: a supervisor and a scenario are required")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("capture: cancelled before launch: %w", err)
	}
	if err := reactivePreflight(sc); err != nil {
		return nil, err
	}
	judged, reason, msg := opts.Policy.ResolveCapture(sc.PolicyRequest())
	if reason != "" {
		return nil, &PolicyError{Reason: reason, Message: msg}
	}
	tg := target{executable: judged.Executable, dir: judged.WorkingDir, roots: judged.FilesystemRoots}
	// The renderer helper starts now, alongside the rest of the launch's
	// preparation; run waits for its process just before the launch, and
	// its hello comes while the target runs (session.go says why that is
	// safe).
	scr := opts.Renderers.start(RendererHelper{Node: opts.Node, Supervisor: sup, NodeSHA256: opts.NodeSHA256, Snapshots: opts.Snapshots}, sc.Terminal)
	defer scr.close() // a capture that stops before run; run closes it itself
	commits, err := sc.Commitments()
	if err != nil {
		return nil, err
	}
	exeSum, err := fileSHA256(tg.executable)
	if err != nil {
		return nil, err
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.RunID == "" {
		opts.RunID = rand.Text()
	}
	tempRoot, err := os.MkdirTemp(opts.TempDir, "gatehouse-capture-")
	if err != nil {
		return nil, fmt.Errorf("capture: make temporary root: %w", err)
	}
	rec := newRecord(sc, opts, commits, exeSum)
	runErr := run(ctx, sup, sc, tg, opts, tempRoot, rec, scr)
	rec.Cleanup.TemporaryRoot = TemporaryRootRemoved
	if err := os.RemoveAll(tempRoot); err != nil {
		rec.Cleanup.TemporaryRoot = "failed"
		runErr = errors.Join(runErr, fmt.Errorf("capture: remove temporary root: %w: %w", err, ErrCleanupIncomplete))
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("capture: cancelled: %w", errors.Join(ctx.Err(), runErr))
	}
	completed := opts.Now().UTC()
	if started, err := time.Parse(TimeLayout, rec.Manifest.StartedAt); err == nil && completed.Before(started) {
		completed = started
	}
	rec.Manifest.CompletedAt = completed.Format(TimeLayout)
	if runErr != nil && rec.Manifest.StartedAt == "" {
		return nil, runErr // nothing was launched
	}
	return rec, runErr
}

// target is what a capture executes, enters and walks: the executable,
// working directory and filesystem roots of the scenario as the policy
// judged them, every symlink resolved.
type target struct {
	executable, dir string
	roots           []string
}

// unchanged re-resolves the checked paths immediately before launch: a
// component swapped for a symlink since the policy check (so the kernel
// would now reach something else) refuses the capture. It narrows, not
// closes, the window between check and exec.
func (t target) unchanged() error {
	for _, p := range append([]string{t.executable, t.dir}, t.roots...) {
		if r, err := policy.ResolvePath(p); err != nil || r != p {
			return &PolicyError{Reason: ReasonPathChanged, Message: fmt.Sprintf("%q changed (a symlink appeared) after the policy checked it; nothing was run", p)}
		}
	}
	return nil
}

// ReasonPathChanged refuses a capture whose checked path no longer
// resolves to itself at launch.
const ReasonPathChanged = "path_changed"

func newRecord(sc *Scenario, opts Options, c Commitments, exeSum string) *Record {
	return &Record{
		SchemaVersion: RecordSchemaVersion,
		Manifest: Manifest{
			GatehouseVersion: opts.GatehouseVersion, ProviderVersion: opts.ProviderVersion,
			Platform: runtime.GOOS, Architecture: runtime.GOARCH, PTYBackend: ptyBackend,
			Scenario: c.Scenario, ComparisonContract: c.ComparisonContract, ShimPlan: c.ShimPlan, ReplayPlan: c.ReplayPlan,
			FullScenarioSHA256: c.FullScenarioSHA256, ComparisonContractSHA256: c.ComparisonContractSHA256,
			ExecutableSHA256: exeSum, NormalizationSHA256: c.NormalizationSHA256,
			ShimPlanSHA256: c.ShimPlanSHA256, ReplayPlanSHA256: c.ReplayPlanSHA256,
		},
		Normalization:  c.Normalization,
		Frames:         []Frame{},
		RenderedFrames: []RenderedFrame{}, InteractionEvents: []InteractionEvent{},
		ProcessSamples: []ProcessSample{}, FilesystemCheckpoints: []FilesystemCheckpoint{},
		ShimEvents: []json.RawMessage{}, ProtocolEvents: []json.RawMessage{}, ReplayTransitions: []json.RawMessage{},
		ReactiveRun: json.RawMessage("null"), EventJournal: []JournalEntry{},
		FilesBefore: []FileState{}, FilesAfter: []FileState{}, FilesystemEffects: []FileEffect{},
		Limitations: []string{}, ResidualUnknowns: []ResidualUnknown{},
	}
}

// environment builds the target's complete environment, sorted.
func environment(sc *Scenario, opts Options, home string, rec *Record) []string {
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	env := map[string]string{}
	for k, v := range sc.Environment {
		env[k] = v
	}
	for _, name := range sc.InheritEnvironment {
		if v, ok := lookup(name); ok {
			env[name] = v
		} else {
			rec.Limitations = append(rec.Limitations, fmt.Sprintf("inherit_environment: %s is not set in Gatehouse's environment and was not passed", name))
		}
	}
	env["HOME"], env["TERM"], env[MarkerVariable] = home, "xterm-256color", opts.RunID
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("capture: hash executable: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("capture: hash executable %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// homeDir is the target's HOME inside the temporary root.
func homeDir(tempRoot string) (string, error) {
	home := filepath.Join(tempRoot, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		return "", fmt.Errorf("capture: make temporary HOME: %w", err)
	}
	return home, nil
}
