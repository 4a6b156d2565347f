package consent

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/gatehouse/gatehouse/backend/confine"

	"github.com/gatehouse/gatehouse/backend/agents"
	"github.com/gatehouse/gatehouse/backend/bundle"
	"github.com/gatehouse/gatehouse/backend/policy"
	"github.com/gatehouse/gatehouse/backend/runner"
)

// Stable refusal codes of the decision pipeline (consent state codes such
// as denied, expired, stale, cancelled and binding_changed are used too).
const (
	CodeSafeMode           = "safe_mode"
	CodeBlocked            = "blocked"
	CodeCapabilityMissing  = "capability_missing"
	CodeAgentDisabled      = "agent_disabled"
	CodePermissionRequired = "permission_required"
	CodePolicyUnreadable   = "policy_unreadable"
	CodeDenied             = "denied"
	// CodeCancelled: the agent cancelled the request while it waited for
	// the person; the proposal is cancelled, not refused.
	CodeCancelled = "cancelled"
	// CodeSuperseded: a newer request of the same run for the same skill
	// replaced this one while it waited (its proposal is stale).
	CodeSuperseded = "superseded"
)

// AskerFunc adapts a function to Asker.
type AskerFunc func(ctx context.Context, p Proposal, r *Request) error

// Ask calls f.
func (f AskerFunc) Ask(ctx context.Context, p Proposal, r *Request) error { return f(ctx, p, r) }

// Asker brings a proposal before the person (a terminal prompt, the
// consent dialog) and returns once they decided through the Manager, or
// the proposal ended some other way.
type Asker interface {
	Ask(ctx context.Context, p Proposal, r *Request) error
}

// AgentDirectory looks agents up again at decision time.
type AgentDirectory interface {
	Get(ctx context.Context, id string) (agents.Agent, error)
}

// Pipeline decides every script launch the same way, whoever asks:
// safe mode → capability → mode → trusted scope → otherwise a proposal
// decided by a person → policy re-read immediately before launch →
// consumption → run. Every refusal is recorded with the rule that made it.
type Pipeline struct {
	Policy  *policy.Store
	Agents  AgentDirectory
	Consent *Manager
	Runner  *runner.Runner
	// Journal, when set, receives the proposed, decided and consumed
	// events of the run journal.
	Journal *runner.Journal
	// ScopeConfinement, when set, returns the confinement a trusted scope
	// was approved under (by its receipt; nil when none was recorded). A
	// scope matches only a run confined at least as much, and the runner
	// re-checks that at launch.
	ScopeConfinement func(ctx context.Context, receiptID string) (*confine.Report, error)
	// OnApproved, when set, is called once a person's approval of r has
	// been read back as approved, before the launch checks, or once the
	// step of an approved workflow plan that r is has been taken (the
	// consent dialog's approval history records the revision here).
	OnApproved func(ctx context.Context, r *Request)
}

func (p *Pipeline) emit(ctx context.Context, r *Request, typ string, detail map[string]any) {
	if p.Journal == nil {
		return
	}
	raw, _ := json.Marshal(detail)
	p.Journal.Emit(ctx, runner.Event{Type: typ, RunID: r.RunID, Agent: r.AgentID, Skill: r.Skill, Revision: r.Execution.Revision, Detail: raw})
}

// Request is one agent's request to run a skill's script.
type Request struct {
	AgentID    string
	RunID      string
	Skill      string
	Execution  bundle.Execution
	Invocation []byte
	Workspace  runner.Workspace
	Pin        runner.Pin
	// Asker reaches the person; nil means nobody can be asked.
	Asker      Asker
	OnProgress func(runner.Progress)
}

// Binding returns what a consent for r is bound to.
func (r *Request) Binding() Binding {
	b := Binding{
		AgentID: r.AgentID, RunID: r.RunID, Skill: r.Skill, Revision: r.Execution.Revision,
		InvocationDigest: Digest(r.Invocation),
		Workspace:        Workspace{Path: r.Workspace.Path, Dev: r.Workspace.Dev, Ino: r.Workspace.Ino},
		Runtime:          Runtime{Path: r.Pin.Path, Version: r.Pin.Version, SHA256: r.Pin.SHA256},
	}
	if m := r.Execution.Manifest; m != nil {
		b.TimeoutMs, b.MaxOutputBytes = m.TimeoutMs, m.MaxOutputBytes
	}
	return b
}

// Execute runs the pipeline for r and returns the attempt's result (a
// refusal is a result too, recorded in the run history).
func (p *Pipeline) Execute(ctx context.Context, r *Request) runner.Result {
	base := runner.Request{
		RunID: r.RunID, Skill: r.Skill, Agent: r.AgentID, Snapshot: r.Execution.Snapshot, Manifest: r.Execution.Manifest,
		Invocation: r.Invocation, Workspace: r.Workspace, Pin: r.Pin, OnProgress: r.OnProgress,
	}
	refuse := func(code, rule, msg string) runner.Result {
		base.AuthorizedBy = rule
		return p.Runner.Refuse(ctx, base, []bundle.Issue{{Code: code, Path: "$", Message: msg}})
	}
	if code, rule, msg := p.admit(ctx, r.AgentID); code != "" {
		return refuse(code, rule, msg)
	}
	if !r.Execution.Available {
		base.AuthorizedBy = "inspection"
		issues := r.Execution.Issues
		if len(issues) == 0 {
			issues = []bundle.Issue{{Code: runner.CodeUnavailable, Path: "$", Message: "this skill has no runnable script (" + r.Execution.Reason + ")"}}
		}
		return p.Runner.Refuse(ctx, base, issues)
	}
	if is := validate(r); len(is) > 0 {
		base.AuthorizedBy = "input schema"
		return p.Runner.Refuse(ctx, base, is)
	}
	pol, _ := p.Policy.Get(ctx) // admit just read it successfully
	b := r.Binding()

	switch {
	case pol.Mode == policy.ModeTrusted:
		if scope, ok := pol.Match(b.Revision, b.AgentID, b.Workspace.Path, b.TimeoutMs, b.MaxOutputBytes); ok && p.scopeConfined(ctx, &base, *scope.ReceiptID) {
			base.AuthorizedBy = "trusted scope " + *scope.ReceiptID
			base.Authorize = func(ctx context.Context) error { return p.recheckScope(ctx, r, *scope.ReceiptID) }
			return p.Runner.Run(ctx, base)
		}
	case pol.Mode == policy.ModeWorkflow:
		base.AuthorizedBy = "workflow plan"
		base.Authorize = func(ctx context.Context) error {
			if err := p.recheck(ctx, r.AgentID); err != nil {
				return err
			}
			live, err := liveBinding(r)
			if err != nil {
				return err
			}
			if _, err := p.Consent.ConsumeStep(live); err != nil {
				return err
			}
			// The person approved this revision in the plan: it is the
			// base of the next dialog's comparison, as a dialog's is.
			if p.OnApproved != nil {
				p.OnApproved(ctx, r)
			}
			return nil
		}
		return p.Runner.Run(ctx, base)
	}

	// Ask: a one-use proposal decided by a person.
	prop, err := p.Consent.Propose(b)
	if err != nil {
		return refuse(Code(err), "consent", err.Error())
	}
	p.emit(ctx, r, runner.EventProposed, map[string]any{"proposalId": prop.ID, "expiresAt": prop.ExpiresAt})
	if r.Asker == nil {
		p.Consent.RefuseByPolicy(prop.ID)
		return refuse(CodePermissionRequired, "consent", "this run needs a person's approval and nobody can be asked")
	}
	if err := r.Asker.Ask(ctx, prop, r); err != nil {
		if ctx.Err() != nil {
			p.Consent.Cancel(prop.ID)
			return refuse(CodeCancelled, "agent", "the request was cancelled while it waited for the person's decision")
		}
		p.Consent.RefuseByPolicy(prop.ID)
		return refuse(CodePermissionRequired, "consent", "could not ask for approval: "+err.Error())
	}
	decided, ok := p.Consent.Get(prop.ID)
	if !ok { // the run ended and took its proposals along
		decided.State = Cancelled
	}
	p.emit(ctx, r, runner.EventDecided, map[string]any{"proposalId": prop.ID, "state": decided.State})
	switch decided.State {
	case Approved:
		if p.OnApproved != nil {
			p.OnApproved(ctx, r)
		}
	case Pending:
		p.Consent.RefuseByPolicy(prop.ID)
		return refuse(CodePermissionRequired, "consent", "no decision was made")
	case Denied:
		return refuse(string(decided.State), "person", "the proposal was denied")
	case Stale:
		return refuse(CodeSuperseded, "consent", "a newer request of this run for the same skill replaced this one before the person decided; only the latest request of a skill waits for a decision")
	case Cancelled:
		return refuse(CodeCancelled, "consent", "the request was cancelled (its session ended) before the person decided")
	default:
		// Expired, cancelled, stale, binding_changed, policy_refused:
		// nobody decided, so the refusal is not the person's.
		return refuse(string(decided.State), "consent: "+string(decided.State), fmt.Sprintf("the proposal was %s without a decision", decided.State))
	}
	base.AuthorizedBy = "person (consent " + prop.ID + ")"
	base.Authorize = func(ctx context.Context) error {
		if err := p.recheck(ctx, r.AgentID); err != nil {
			p.Consent.RefuseByPolicy(prop.ID)
			return err
		}
		live, err := liveBinding(r)
		if err != nil {
			live.Workspace = Workspace{} // cannot match: voids the consent
		}
		if err := p.Consent.Consume(prop.ID, live); err != nil {
			return err
		}
		p.emit(ctx, r, runner.EventConsumed, map[string]any{"proposalId": prop.ID})
		return nil
	}
	return p.Runner.Run(ctx, base)
}

// admit applies the checks that come before any mode: the policy can be
// read, safe mode is off, the agent exists, is enabled and may execute
// skills, and the mode is not blocked.
func (p *Pipeline) admit(ctx context.Context, agentID string) (code, rule, msg string) {
	if code, rule, msg := p.admitAgent(ctx, agentID); code != "" {
		return code, rule, msg
	}
	pol, err := p.Policy.Get(ctx)
	if err != nil {
		return CodePolicyUnreadable, "policy", err.Error()
	}
	if pol.Mode == policy.ModeBlocked {
		return CodeBlocked, "policy: blocked", "the execution policy blocks every script"
	}
	return "", "", ""
}

// admitAgent applies the checks every program launch passes, whatever
// launches it: the policy can be read, safe mode is off, the agent exists,
// is enabled and may execute.
func (p *Pipeline) admitAgent(ctx context.Context, agentID string) (code, rule, msg string) {
	pol, err := p.Policy.Get(ctx)
	if err != nil {
		return CodePolicyUnreadable, "policy", err.Error()
	}
	if pol.SafeMode {
		return CodeSafeMode, "policy: safe mode", "safe mode is on: no script runs"
	}
	a, err := p.Agents.Get(ctx, agentID)
	switch {
	case err != nil:
		return CodeCapabilityMissing, "agent", fmt.Sprintf("agent %q is not registered", agentID)
	case a.Disabled:
		return CodeAgentDisabled, "agent", fmt.Sprintf("agent %q is disabled", a.Name)
	case !a.CanExecuteSkills:
		return CodeCapabilityMissing, "agent: can_execute_skills", fmt.Sprintf("agent %q may not execute skills", a.Name)
	}
	return "", "", ""
}

// recheck re-reads policy and agent immediately before launch.
func (p *Pipeline) recheck(ctx context.Context, agentID string) error {
	if code, _, msg := p.admit(ctx, agentID); code != "" {
		return &Error{Code: code, Msg: msg}
	}
	return nil
}

// scopeConfined reports whether a run now would be confined at least as
// much as the trusted scope was approved under, and makes the runner
// require it at launch. A scope that is not covered does not match (the
// person is asked instead).
func (p *Pipeline) scopeConfined(ctx context.Context, base *runner.Request, receipt string) bool {
	if p.ScopeConfinement == nil {
		return true
	}
	want, err := p.ScopeConfinement(ctx, receipt)
	if err != nil {
		return false
	}
	settings, err := p.Runner.CurrentConfinement(ctx)
	if err != nil {
		return false
	}
	have, err := p.Runner.Confinement(settings)
	if err != nil || !have.Covers(want) {
		return false
	}
	base.RequireConfinement = want
	return true
}

// recheckScope additionally requires the trusted scope (same receipt) to
// still be in force.
func (p *Pipeline) recheckScope(ctx context.Context, r *Request, receipt string) error {
	if err := p.recheck(ctx, r.AgentID); err != nil {
		return err
	}
	pol, err := p.Policy.Get(ctx)
	if err != nil {
		return &Error{Code: CodePolicyUnreadable, Msg: err.Error()}
	}
	b := r.Binding()
	scope, ok := pol.Match(b.Revision, b.AgentID, b.Workspace.Path, b.TimeoutMs, b.MaxOutputBytes)
	if !ok || *scope.ReceiptID != receipt {
		return &Error{Code: "scope_revoked", Msg: "the trusted scope was removed or changed before launch"}
	}
	if _, err := liveBinding(r); err != nil {
		return err
	}
	return nil
}

// liveBinding re-resolves the workspace now, so a directory replaced or
// swapped for a symlink since approval yields a different binding.
func liveBinding(r *Request) (Binding, error) {
	b := r.Binding()
	if err := r.Workspace.Recheck(); err != nil {
		return b, &Error{Code: "binding_changed", Msg: err.Error()}
	}
	now, err := runner.ResolveWorkspace(r.Workspace.Path)
	if err != nil {
		return b, &Error{Code: "binding_changed", Msg: err.Error()}
	}
	b.Workspace = Workspace{Path: now.Path, Dev: now.Dev, Ino: now.Ino}
	return b, nil
}

func validate(r *Request) []bundle.Issue {
	s, is := bundle.CompileSchema(r.Execution.Manifest.InputSchema, true)
	if len(is) > 0 {
		return is
	}
	_, is = bundle.ValidateInvocation(s, r.Invocation)
	for i := range is {
		is[i].Code = runner.CodeInvalidInput + ":" + is[i].Code
	}
	return is
}
