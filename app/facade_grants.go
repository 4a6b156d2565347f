package app

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/backend/consent"
)

// PlanView is a workflow plan as the plan dialog shows it: every step with
// the exact invocation the person approves.
type PlanView struct {
	ID        string         `json:"id"`
	RunID     string         `json:"runId"`
	State     string         `json:"state"`
	CreatedAt time.Time      `json:"createdAt"`
	ExpiresAt time.Time      `json:"expiresAt"`
	Agent     AgentRef       `json:"agent"`
	Steps     []PlanStepView `json:"steps"`
	Warning   string         `json:"warning"`
}

// PlanStepView is one exact step of a plan.
type PlanStepView struct {
	Skill          string     `json:"skill"`
	SkillRoot      string     `json:"skillRoot"`
	Revision       string     `json:"revision"`
	Entrypoint     string     `json:"entrypoint"`
	Files          []FileSize `json:"files"`
	Workspace      string     `json:"workspace"`
	TimeoutMs      int        `json:"timeoutMs"`
	MaxOutputBytes int        `json:"maxOutputBytes"`
	Invocation     string     `json:"invocation"`
	Consumed       bool       `json:"consumed"`
}

// GrantView is a capture grant request as the grant dialog shows it.
type GrantView struct {
	ID        string               `json:"id"`
	RunID     string               `json:"runId"`
	State     string               `json:"state"`
	Scope     string               `json:"scope,omitempty"`
	Uses      int                  `json:"uses"`
	CreatedAt time.Time            `json:"createdAt"`
	ExpiresAt time.Time            `json:"expiresAt"`
	Agent     AgentRef             `json:"agent"`
	Request   consent.GrantRequest `json:"request"`
	Command   []string             `json:"command"`
	Warning   string               `json:"warning"`
}

// captureGrantWarning is shown with every capture grant request.
const captureGrantWarning = "The command runs with YOUR full permissions inside a terminal Gatehouse records. " +
	"“Once” allows this one capture; “for this session” allows every capture of this connection with the same program and " +
	"working directory, no other environment names and no other filesystem roots, until the agent disconnects."

// planSteps turns the checked run requests of a plan into step views.
func planSteps(reqs []*consent.Request, roots []string) []PlanStepView {
	out := make([]PlanStepView, len(reqs))
	for i, r := range reqs {
		pv := proposalView(consent.Proposal{}, r, roots[i])
		out[i] = PlanStepView{Skill: pv.Skill, SkillRoot: pv.SkillRoot, Revision: pv.Revision, Entrypoint: pv.Entrypoint, Files: pv.Files,
			Workspace: pv.Workspace, TimeoutMs: pv.TimeoutMs, MaxOutputBytes: pv.MaxOutputBytes, Invocation: pv.Invocation}
	}
	return out
}

// askPlan returns the consent.PlanAsker that raises the plan dialog with
// steps and waits for the person.
func (f *Facade) askPlan(agentID string, steps []PlanStepView) consent.PlanAsker {
	return func(ctx context.Context, p consent.Plan) error {
		v := PlanView{ID: p.ID, RunID: p.RunID, State: string(p.State), CreatedAt: p.CreatedAt, ExpiresAt: p.ExpiresAt,
			Agent: f.agentRef(ctx, agentID), Steps: steps, Warning: planWarning(ctx, f.runner, steps)}
		f.planViews.raise(p.ID, v)
		_, err := f.consent.WaitPlan(ctx, p.ID)
		return err
	}
}

// askGrant raises the grant dialog for a capture request and waits for the
// person's decision; it returns the grant as they left it.
func (f *Facade) askGrant(ctx context.Context, runID, agentID string, req consent.GrantRequest, command []string, onRaised func(consent.Grant)) (consent.Grant, error) {
	g, err := f.consent.RequestGrant(runID, agentID, req)
	if err != nil {
		return g, err
	}
	v := GrantView{ID: g.ID, RunID: g.RunID, State: string(g.State), CreatedAt: g.CreatedAt, ExpiresAt: g.ExpiresAt,
		Agent: f.agentRef(ctx, agentID), Request: g.Request, Command: command, Warning: captureGrantWarning}
	if v.Request.EnvNames == nil {
		v.Request.EnvNames = []string{}
	}
	if v.Request.FilesystemRoots == nil {
		v.Request.FilesystemRoots = []string{}
	}
	f.grantViews.raise(g.ID, v)
	if onRaised != nil {
		onRaised(g)
	}
	got, err := f.consent.WaitGrant(ctx, g.ID)
	if err != nil {
		f.consent.WithdrawGrant(g.ID)
		return g, err
	}
	return got, nil
}

func (f *Facade) agentRef(ctx context.Context, agentID string) AgentRef {
	ref := AgentRef{ID: agentID, Name: agentID}
	if ag, err := f.agents.Get(ctx, agentID); err == nil {
		ref.Name = ag.Name
	}
	return ref
}

// noteConsent applies a consent event to the stored view of its request
// and forwards it to the UI ("raised" is published by the askers, with
// the details only they know).
func (f *Facade) noteConsent(e consent.Event) {
	if e.Type == "raised" {
		return
	}
	switch {
	case e.Kind == consent.KindProposal:
		f.proposals.note(e.Type, e.Proposal.ID, func(v *ProposalView) { v.State = string(e.Proposal.State) })
	case e.Plan != nil:
		f.planViews.note(e.Type, e.Plan.ID, func(v *PlanView) {
			v.State = string(e.Plan.State)
			// Copy on write: views handed out earlier share the old slice.
			steps := append([]PlanStepView(nil), v.Steps...)
			for i := range steps {
				steps[i].Consumed = i < len(e.Plan.Consumed) && e.Plan.Consumed[i]
			}
			v.Steps = steps
		})
	case e.Grant != nil:
		f.grantViews.note(e.Type, e.Grant.ID, func(v *GrantView) {
			v.State, v.Scope, v.Uses = string(e.Grant.State), string(e.Grant.Scope), e.Grant.Uses
		})
	}
}

// PendingPlansResult lists plans awaiting a decision.
type PendingPlansResult struct {
	Plans []PlanView `json:"plans"`
}

// PendingPlans lists the workflow plans the person has not decided yet.
func (f *Facade) PendingPlans(Empty) (PendingPlansResult, error) {
	return PendingPlansResult{Plans: pendingOf(f.planViews, f.consent.PendingPlans(), func(p consent.Plan) (string, consent.State) { return p.ID, p.State })}, nil
}

// DecidePlanArgs is the person's decision on a workflow plan.
type DecidePlanArgs struct {
	PlanID  string `json:"planId"`
	Approve bool   `json:"approve"`
}

// DecidePlan approves or denies a pending plan, once; deciding a plan that
// is no longer pending is one of the decision errors (docs/api.md) and
// changes nothing.
func (f *Facade) DecidePlan(a DecidePlanArgs) (PlanView, error) {
	p, err := f.consent.DecidePlan(a.PlanID, a.Approve)
	return f.planViews.decided(a.PlanID, p.State, err, nil)
}

// PendingGrantsResult lists capture grants awaiting a decision.
type PendingGrantsResult struct {
	Grants []GrantView `json:"grants"`
}

// PendingGrants lists the capture grants the person has not decided yet.
func (f *Facade) PendingGrants(Empty) (PendingGrantsResult, error) {
	return PendingGrantsResult{Grants: pendingOf(f.grantViews, f.consent.PendingGrants(), func(g consent.Grant) (string, consent.State) { return g.ID, g.State })}, nil
}

// DecideGrantArgs is the person's decision on a capture grant; scope
// ("once" or "session") is required when approving.
type DecideGrantArgs struct {
	GrantID string `json:"grantId"`
	Approve bool   `json:"approve"`
	Scope   string `json:"scope"`
}

// DecideGrant approves (for once or for the session) or denies a pending
// capture grant, once; deciding a grant that is no longer pending is one
// of the decision errors (docs/api.md) and changes nothing.
func (f *Facade) DecideGrant(a DecideGrantArgs) (GrantView, error) {
	g, err := f.consent.DecideGrant(a.GrantID, a.Approve, consent.GrantScope(a.Scope))
	return f.grantViews.decided(a.GrantID, g.State, err, func(v *GrantView) { v.Scope = string(g.Scope) })
}
