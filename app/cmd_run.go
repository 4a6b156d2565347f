package app

import (
	"context"
	"fmt"
	iopkg "io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/gatehouse/gatehouse/backend/agents"
	"github.com/gatehouse/gatehouse/backend/approvals"
	"github.com/gatehouse/gatehouse/backend/bundle"
	"github.com/gatehouse/gatehouse/backend/consent"
	"github.com/gatehouse/gatehouse/backend/proctree"
	"github.com/gatehouse/gatehouse/backend/runner"
	"github.com/gatehouse/gatehouse/backend/skills"
)

const runUsage = `skill run PATH|NAME --input FILE|- [--workspace DIR] [--json]

Runs the skill's script once, as inspected now, after you approve it on this
terminal. The invocation (one JSON object) comes from FILE or stdin ("-").
The envelope is printed as JSON on stdout; the exit status is 0 only when
the run succeeded. Without a terminal nothing runs (permission_required).`

func runSkillRun(ctx context.Context, io IO, args []string) error {
	fs := newFlags(io, "skill run", runUsage)
	input := fs.String("input", "", "invocation JSON file, or - for stdin (required)")
	workspace := fs.String("workspace", "", "working directory of the script (default: the current directory)")
	asJSON := fs.Bool("json", false, "print only the envelope (no summary on the terminal)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *input == "" {
		return usageError("skill run needs exactly one PATH or NAME and --input FILE|-")
	}
	invocation, err := readInvocation(io, *input)
	if err != nil {
		return err
	}
	if *workspace == "" {
		if *workspace, err = os.Getwd(); err != nil {
			return errorf("workspace", CategoryIO, "%v", err)
		}
	}
	ws, err := runner.ResolveWorkspace(*workspace)
	if err != nil {
		return errorf("workspace", CategoryInvalid, "%v", err)
	}
	env, s, err := openSkill(ctx, io, pos[0])
	if err != nil {
		return err
	}
	defer env.Close()
	ex := env.inspectExecution(s)

	sup, err := proctree.NewSupervisor(proctree.Options{})
	if err != nil {
		return errorf("supervisor", CategoryInternal, "%v", err)
	}
	defer sup.Close()
	journal := runner.NewJournal(env.DB, func(err error) { fmt.Fprintf(io.Stderr, "gatehouse: warning: %v\n", err) })
	rn, err := runner.New(runner.Config{Supervisor: sup, RunsDir: env.RunsDir(), Journal: journal, History: env.DB, Settings: env.Confinement})
	if err != nil {
		return errorf("runner", CategoryInternal, "%v", err)
	}
	defer rn.Close()
	mgr := consent.NewManager(consent.SystemClock())
	pipeline := &consent.Pipeline{Policy: env.PolicyStore(), Agents: agents.New(env.DB, nil), Consent: mgr, Runner: rn, Journal: journal,
		ScopeConfinement: scopeConfinement(env, rn), OnApproved: approvalRecorder(env)}
	runID := mgr.StartRun(agents.LocalID)
	defer mgr.EndRun(runID)
	req := &consent.Request{AgentID: agents.LocalID, RunID: runID, Skill: s.Name, Execution: ex, Invocation: invocation, Workspace: ws}
	if env.Pin != nil {
		req.Pin = *env.Pin
	}
	// The person at this terminal decides, when the policy asks for a
	// decision; without a terminal only a trusted scope can authorize.
	if tty, err := io.openTerminal(); err == nil {
		defer tty.Close()
		req.Asker = &terminalAsker{tty: tty, mgr: mgr, skill: s, runner: rn, book: approvals.Open(env.DB, nil)}
	}
	if !*asJSON && io.stderrIsTerminal() {
		req.OnProgress = func(p runner.Progress) { fmt.Fprint(io.Stderr, progressLine(p)) }
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	res := pipeline.Execute(ctx, req)
	if e := res.Envelope; e.Status == runner.StatusRefused && len(e.Errors) > 0 && e.Errors[0].Code == consent.CodePermissionRequired && req.Asker == nil {
		return errorf("permission_required", "permission", "this run needs your approval on a terminal, and there is none; nothing was run")
	}
	return printEnvelope(io, res, *asJSON)
}

func readInvocation(io IO, input string) ([]byte, error) {
	var r iopkg.Reader
	if input == "-" {
		r = io.Stdin
	} else {
		f, err := os.Open(input)
		if err != nil {
			return nil, errorf("input", CategoryIO, "%v", err)
		}
		defer f.Close()
		r = f
	}
	// One byte past the limit is enough for validation to refuse it.
	b, err := iopkg.ReadAll(iopkg.LimitReader(r, bundle.MaxInvocationBytes+1))
	if err != nil {
		return nil, errorf("input", CategoryIO, "%v", err)
	}
	return b, nil
}

// printEnvelope writes the envelope to stdout and the script's
// diagnostics to stderr; only a succeeded run exits 0.
func printEnvelope(io IO, res runner.Result, quiet bool) error {
	if res.Stderr != "" {
		fmt.Fprintf(io.Stderr, "--- script stderr (%d bytes) ---\n%s\n---\n", len(res.Stderr), visibleText(res.Stderr))
	}
	if err := writeJSON(io, res.Envelope); err != nil {
		return err
	}
	e := res.Envelope
	if !quiet && io.stderrIsTerminal() {
		fmt.Fprintf(io.Stderr, "gatehouse: %s in %d ms", e.Status, e.ElapsedMs)
		if e.Cleanup != nil {
			fmt.Fprintf(io.Stderr, "; cleanup verified=%v by %s", e.Cleanup.Verified, e.Cleanup.Mechanism)
		}
		if e.Confinement != nil {
			fmt.Fprintf(io.Stderr, "; confinement: %s", e.Confinement.Summary())
		}
		fmt.Fprintln(io.Stderr)
		for _, i := range e.Errors {
			fmt.Fprintf(io.Stderr, "  %s at %s: %s\n", i.Code, i.Path, visibleText(i.Message))
		}
	}
	if e.Status != runner.StatusSucceeded {
		return &CLIError{Code: string(e.Status), Category: "run", Message: "run " + string(e.Status), Exit: 1, Silent: true}
	}
	return nil
}

func progressLine(p runner.Progress) string {
	if p.Total != nil && *p.Total > 0 {
		width := 30
		done := int(int64(width) * p.Completed / *p.Total)
		return fmt.Sprintf("\r[%s%s] %d/%d %s\x1b[K", strings.Repeat("#", done), strings.Repeat(".", width-done), p.Completed, *p.Total, visibleLine(p.Message))
	}
	return fmt.Sprintf("\r%d %s\x1b[K", p.Completed, visibleLine(p.Message))
}

// openSkill opens the data directory and resolves arg in it
// (resolveSkill); the caller closes the Env it returns. On an error
// nothing is left open.
func openSkill(ctx context.Context, io IO, arg string) (*Env, *skills.Skill, error) {
	env, err := openEnv(ctx, io)
	if err != nil {
		return nil, nil, err
	}
	s, err := env.resolveSkill(ctx, arg)
	if err != nil {
		env.Close()
		return nil, nil, err
	}
	return env, s, nil
}

func (e *Env) resolveSkill(ctx context.Context, arg string) (*skills.Skill, error) {
	if strings.Contains(arg, "/") {
		s, err := skills.LoadFolder(arg)
		if err != nil {
			return nil, errorf("not_a_skill", CategoryNotFound, "%v", err)
		}
		return s, nil
	}
	cat, err := e.discover(ctx)
	if err != nil {
		return nil, err
	}
	s, ok := cat.Find(arg)
	if !ok {
		return nil, errorf("skill_not_found", CategoryNotFound, "no skill named %q in %d roots; `gatehouse skill list` shows what exists", arg, len(cat.Roots))
	}
	return s, nil
}
