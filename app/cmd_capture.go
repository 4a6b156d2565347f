package app

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/gatehouse/gatehouse/backend/agents"
	"github.com/gatehouse/gatehouse/backend/capture"
	"github.com/gatehouse/gatehouse/backend/capture/record"
	"github.com/gatehouse/gatehouse/backend/consent"
	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/library"
	"github.com/gatehouse/gatehouse/backend/policy"
	"github.com/gatehouse/gatehouse/backend/proctree"
	"github.com/gatehouse/gatehouse/backend/runner"
	"github.com/gatehouse/gatehouse/backend/store"
)

const captureUsage = `capture-process SCENARIO.json|- > capture.json

Runs the approved command of a Process Capture v4 scenario (FILE, or stdin
for "-") in a pseudo-terminal and writes its Evidence (schema_version 2,
predicate gatehouse.process-capture/v4) to stdout; a copy is saved as
<data dir>/evidence/<evidence_id>.json. The operator policy (the stored
capture policy, overridden by the GATEHOUSE_PROCESS_* variables) is checked
before anything runs; running this command is the local user's approval,
so auto-grant does not apply. The target runs with your permissions: this
is an observation tool, not a sandbox. Ctrl-C cancels the capture, ends
every process it started and removes its temporary files; nothing is
written then. Progress goes to stderr only when stderr is a terminal.`

func runCaptureProcess(ctx context.Context, io IO, args []string) error {
	fs := newFlags(io, "capture-process", captureUsage)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError("capture-process needs exactly one SCENARIO.json (or - for stdin)")
	}
	data, err := readSource(io, pos[0], capture.MaxScenarioBytes)
	if err != nil {
		return err
	}
	sc, issues := capture.ParseScenario(data)
	if len(issues) > 0 {
		return &CLIError{Code: "invalid_scenario", Category: CategoryInvalid, Details: issues,
			Message: fmt.Sprintf("the scenario has %d issue(s); nothing was run", len(issues))}
	}
	env, err := openEnv(ctx, io)
	if err != nil {
		return err
	}
	defer env.Close()
	pol, err := loadCapturePolicy(ctx, env)
	if err != nil {
		return err
	}
	if reason, msg := pol.CheckCapture(sc.PolicyRequest()); reason != "" {
		return policyRefusal(reason, msg)
	}
	// The verifier's digest (the saved file's verification mark) is taken
	// while the capture runs: after an install or upgrade it hashes this
	// executable (~35 ms), which would otherwise follow the save. It is
	// computed once per process whoever asks first (env.verifierID).
	go env.verifierID()

	sup, err := proctree.NewSupervisor(proctree.Options{})
	if err != nil {
		return errorf("supervisor", CategoryInternal, "%v", err)
	}
	defer sup.Close()
	// Safe mode refuses a capture as it refuses a run, recorded alike.
	journal := runner.NewJournal(env.DB, func(err error) { fmt.Fprintf(io.Stderr, "gatehouse: warning: %v\n", err) })
	rn, err := runner.New(runner.Config{Supervisor: sup, RunsDir: env.RunsDir(), Journal: journal, History: env.DB})
	if err != nil {
		return errorf("runner", CategoryInternal, "%v", err)
	}
	defer rn.Close()
	gate := &consent.Pipeline{Policy: env.PolicyStore(), Agents: agents.New(env.DB, nil), Runner: rn, Journal: journal}
	if err := gate.AdmitCapture(ctx, agents.LocalID, "", sc.Executable); err != nil {
		return &CLIError{Code: consent.Code(err), Category: "permission", Message: err.Error(), Details: map[string]string{"reason": consent.Code(err)}}
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	progress := startProgress(io, sc)
	rec, ev, out, path, err := captureAndSave(ctx, env, sup, nil, sc, pol)
	progress.stop()
	if err != nil {
		return err
	}
	if _, err := io.Stdout.Write(out); err != nil {
		return errorf("output", CategoryIO, "%v", err)
	}
	if io.stderrIsTerminal() {
		code := "none"
		if rec.Exit.Code != nil {
			code = fmt.Sprint(*rec.Exit.Code)
		}
		fmt.Fprintf(io.Stderr, "gatehouse: captured: %s (exit code %s), settlement %s, %d frames, %d checkpoints, truncated=%v\n  evidence %s saved to %s\n",
			rec.Exit.Reason, code, rec.Settlement.State, len(rec.Frames), len(rec.FilesystemCheckpoints), rec.Truncated, ev.EvidenceID, path)
	}
	return nil
}

// captureAndSave runs one capture of sc under the operator policy pol,
// seals it as Evidence, saves it under the data directory's evidence/
// folder and indexes it. The temporary root lives below the runs
// directory under this instance's tag, so the next start sweeps what a
// crash leaves behind. It is shared by the CLI and the MCP tool. ahead,
// when set, supplies the renderer helper started ahead (the facade's).
func captureAndSave(ctx context.Context, env *Env, sup *proctree.Supervisor, ahead *aheadRenderers, sc *capture.Scenario, pol policy.CaptureSettings) (*capture.Record, *evidence.Envelope, []byte, string, error) {
	tmp := filepath.Join(env.RunsDir(), sup.Instance().Tag()+".capture-"+rand.Text())
	if err := os.MkdirAll(env.RunsDir(), 0o700); err != nil {
		return nil, nil, nil, "", errorf("capture_failed", CategoryIO, "%v", err)
	}
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return nil, nil, nil, "", errorf("capture_failed", CategoryIO, "%v", err)
	}
	defer os.RemoveAll(tmp)
	rh, err := rendererHelper(env, sup)
	if err != nil {
		return nil, nil, nil, "", err
	}
	var renderers *capture.Renderers
	if ahead != nil {
		renderers = ahead.get(rh)
	}
	rec, err := capture.Capture(ctx, sup, sc, capture.Options{
		Policy: pol, GatehouseVersion: Version, ProviderVersion: Version, TempDir: tmp, Node: rh.Node, NodeSHA256: rh.NodeSHA256, Snapshots: rh.Snapshots, Renderers: renderers,
		LookupEnv: func(name string) (string, bool) { v := env.Getenv(name); return v, v != "" },
	})
	if err != nil {
		return nil, nil, nil, "", captureFailure(ctx, err)
	}
	ev, check, err := captureEnvelope(rec)
	if err != nil {
		return nil, nil, nil, "", err
	}
	sum := library.CaptureSummary(rec)
	sum["origin"] = OriginCaptured
	summary, _ := json.Marshal(sum)
	// The file is written and synced from the moment the seal has written
	// the bytes, while they are checked, and saved under its name only
	// once they verify (library.SealAndSave).
	entry, out, err := env.lib().SealAndSave(ctx, store.EvidenceEntry{PredicateType: ev.PredicateType,
		Operation: ev.Operation, Summary: summary}, ev, check)
	if err != nil {
		return nil, nil, nil, "", libError(err)
	}
	return rec, ev, out, entry.Path, nil
}

// loadCapturePolicy is the capture operator policy in effect: the stored
// settings (defaults when none are stored) with the environment overrides.
// A malformed override is an error, not a silent "disabled".
func loadCapturePolicy(ctx context.Context, env *Env) (policy.CaptureSettings, error) {
	s := policy.DefaultCaptureSettings()
	raw, err := env.DB.Get(ctx, policy.CaptureSettingsNamespace, policy.CaptureSettingsKey)
	switch {
	case err == nil:
		parsed, issues := policy.ParseCaptureSettings(raw)
		if len(issues) > 0 {
			return s, &CLIError{Code: "capture_policy", Category: CategoryIO, Details: issues,
				Message: "the stored capture policy is unreadable; nothing was run"}
		}
		s = parsed
	case !errors.Is(err, store.ErrNotFound):
		return s, errorf("capture_policy", CategoryIO, "%v", err)
	}
	eff, err := s.WithEnvOverrides(env.Getenv)
	if err != nil {
		return policy.DefaultCaptureSettings(), errorf("capture_policy", CategoryInvalid, "a capture policy override is malformed, so nothing was run: %v", err)
	}
	return eff, nil
}

func policyRefusal(reason, msg string) error {
	return &CLIError{Code: reason, Category: "permission", Message: msg + "; nothing was run",
		Details: map[string]string{"reason": reason}}
}

// captureFailure turns an error of capture.Capture into a structured error.
func captureFailure(ctx context.Context, err error) error {
	var pe *capture.PolicyError
	var pf *capture.PreflightError
	switch {
	case errors.As(err, &pe):
		return policyRefusal(pe.Reason, pe.Message)
	case errors.As(err, &pf): // a reactive graph refused before launch
		return &CLIError{Code: "preflight_refused", Category: CategoryInvalid, Details: pf.Issues,
			Message: pf.Error() + "; nothing was run"}
	case ctx.Err() != nil:
		return &CLIError{Code: "cancelled", Category: "cancelled", Exit: 130,
			Message: "the capture was cancelled: its processes were ended and its temporary files removed; nothing was written"}
	case errors.Is(err, capture.ErrCleanupIncomplete):
		return errorf("cleanup_incomplete", CategoryInternal, "the capture ran but its cleanup could not be verified, so no Evidence was written: %v", err)
	}
	return errorf("capture_failed", CategoryIO, "%v", err)
}

// captureEvidence wraps rec in a sealed Evidence v2 envelope and returns it
// with its JSON (compact, "<" and ">" not escaped, newline-terminated),
// verified in full for saving: the seal parses the bytes exactly as
// evidence.Parse does (evidence_id recomputed from them) and the record
// is checked as library.Verify checks it. captureAndSave does the same
// with the save overlapping the checks (library.SealAndSave).
func captureEvidence(rec *capture.Record) (*evidence.Envelope, []byte, library.Checked, error) {
	ev, ahead, err := captureEnvelope(rec)
	if err != nil {
		return nil, nil, library.Checked{}, err
	}
	out, parsed, err := evidence.SealParsed(ev)
	if err != nil {
		return nil, nil, library.Checked{}, errorf("evidence", CategoryInternal, "the capture record cannot be sealed as Evidence: %v", err)
	}
	checked, err := library.CheckParsedForSaveAhead(out, parsed, ev.EvidenceID, ahead)
	if err != nil {
		return nil, nil, library.Checked{}, libError(err)
	}
	return ev, out, checked, nil
}

// captureEnvelope is rec's Evidence envelope, not yet sealed, with the
// record's check started ahead of the seal (library.CheckRecordAhead).
func captureEnvelope(rec *capture.Record) (*evidence.Envelope, *library.RecordCheck, error) {
	// The record's own streaming encoder writes exactly encoding/json's
	// bytes (record.TestWriteJSONIsEncode) piece by piece into one buffer
	// grown once to an estimate of the size, instead of building the whole
	// encoding and copying it.
	result, err := rec.AppendJSON(nil, false)
	if err != nil {
		return nil, nil, errorf("internal", CategoryInternal, "encode the capture record: %v", err)
	}
	ev, err := record.NewEnvelope(rec, result, Version)
	if err != nil {
		return nil, nil, errorf("internal", CategoryInternal, "%v", err)
	}
	// The file is the JSON the seal checked (compact, as an asciicast
	// import saves it): indenting a 10 MB record again would cost as much
	// as sealing it.
	//
	// Without the encoder's final newline the record is compact JSON, which
	// the seal writes as it is instead of compacting 10 MB again through
	// encoding/json (which drops the newline too: the bytes are the same).
	ev.NormalizedResult = bytes.TrimSuffix(ev.NormalizedResult, []byte("\n"))
	// The record's check runs beside the seal (two cores), and counts for
	// the saved bytes only when the sealed record is exactly these bytes.
	return ev, library.CheckRecordAhead(ev.NormalizedResult), nil
}

// marshalPlain is JSON without HTML escaping (placeholders such as
// "<redacted>" stay readable), indented when indent is set, ending with a
// newline.
func marshalPlain(v any, indent string) ([]byte, error) {
	var b exactBuffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.b, nil
}

// exactBuffer keeps what is written to it in a slice of exactly that
// size: json.Encoder writes a whole encoding in one Write, which a
// bytes.Buffer would copy into doublings of its capacity (~40 MB
// allocated for a 10 MB capture record).
type exactBuffer struct{ b []byte }

func (w *exactBuffer) Write(p []byte) (int, error) {
	if w.b == nil {
		w.b = bytes.Clone(p)
	} else {
		w.b = append(w.b, p...)
	}
	return len(p), nil
}

// progress reports a running capture on a terminal stderr.
type progress struct {
	done     chan struct{}
	finished chan struct{}
}

func startProgress(io IO, sc *capture.Scenario) *progress {
	p := &progress{done: make(chan struct{}), finished: make(chan struct{})}
	if !io.stderrIsTerminal() {
		close(p.finished)
		return p
	}
	go func() {
		defer close(p.finished)
		begin := time.Now()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			fmt.Fprintf(io.Stderr, "\rgatehouse: capturing %s (timeout %d ms)… %ds\x1b[K", visibleLine(sc.Executable), sc.TimeoutMS, int(time.Since(begin).Seconds()))
			select {
			case <-p.done:
				fmt.Fprint(io.Stderr, "\r\x1b[K")
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

func (p *progress) stop() {
	close(p.done)
	<-p.finished
}
