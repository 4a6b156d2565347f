package consent

import (
	"context"
	"time"
)

// Step is one exact, pre-approved invocation of a workflow plan.
type Step struct {
	Skill            string    `json:"skill"`
	Revision         string    `json:"revision"`
	InvocationDigest string    `json:"invocationDigest"`
	Workspace        Workspace `json:"workspace"`
}

// PlanState is a workflow plan's state: one of the States a plan can
// take. Pending and approved are live.
type PlanState = State

// Plan states.
const (
	PlanPending   = Pending
	PlanApproved  = Approved
	PlanDenied    = Denied
	PlanExpired   = Expired   // nobody decided within Window
	PlanStale     = Stale     // replaced by a newer plan of the run
	PlanCancelled = Cancelled // the run ended, or its requester stopped waiting
)

// MaxPlansPerRun bounds the plans one run may propose, as
// MaxProposalsPerRun bounds proposals: a replaced plan is kept (so
// deciding it says it was withdrawn) until the run ends.
const MaxPlansPerRun = 64

// Plan is a copy of a run's workflow plan.
type Plan struct {
	ID        string    `json:"id"`
	RunID     string    `json:"runId"`
	AgentID   string    `json:"agentId"`
	State     PlanState `json:"state"`
	Steps     []Step    `json:"steps"`
	Consumed  []bool    `json:"consumed"`
	CreatedAt time.Time `json:"createdAt"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// planData is what a plan holds besides the lifecycle.
type planData struct {
	agentID  string
	steps    []Step
	consumed []bool
}

// planView is a plan's public state, sharing no slice with it.
func planView(p *request[planData]) Plan {
	return Plan{ID: p.id, RunID: p.runID, AgentID: p.data.agentID, State: p.state, Steps: append([]Step(nil), p.data.steps...),
		Consumed: append([]bool(nil), p.data.consumed...), CreatedAt: p.createdAt, ExpiresAt: p.createdAt.Add(Window)}
}

// ProposePlan puts a bounded plan (1 to MaxPlanSteps exact steps) up for
// approval in a run. A pending earlier plan of the run becomes stale; an
// approved one is replaced, and its unused steps with it. A run proposes
// at most MaxPlansPerRun plans (too_many_plans).
func (m *Manager) ProposePlan(runID, agentID string, steps []Step) (Plan, error) {
	if len(steps) == 0 || len(steps) > MaxPlanSteps {
		return Plan{}, refuse("invalid_plan", "a plan has 1 to %d steps, got %d", MaxPlanSteps, len(steps))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.liveRunLocked(runID, agentID); err != nil {
		return Plan{}, err
	}
	if len(m.plans.byRun[runID]) >= MaxPlansPerRun {
		return Plan{}, refuse("too_many_plans", "run %s already proposed %d plans", runID, MaxPlansPerRun)
	}
	// Replacing: a run has one live plan, the newest.
	for _, old := range m.plans.ofRun(runID) {
		if !old.state.Terminal() {
			m.plans.set(old, Stale)
		}
	}
	p := m.plans.raise(runID, planData{agentID: agentID, steps: append([]Step(nil), steps...), consumed: make([]bool, len(steps))})
	return planView(p), nil
}

// GetPlan returns a plan's current state.
func (m *Manager) GetPlan(id string) (Plan, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.plans.get(id)
}

// PendingPlans lists the plans waiting for a decision, oldest first.
func (m *Manager) PendingPlans() []Plan {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.plans.pending()
}

// DecidePlan approves or denies a pending plan, once. Deciding any other
// plan changes nothing and fails with the decision rule's code, as
// Decide does.
func (m *Manager) DecidePlan(planID string, approve bool) (Plan, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.plans.decide(planID, approve, nil)
}

// WithdrawPlan cancels a plan that is still pending, for a request that
// stopped waiting (the call was cancelled). A decided plan is unchanged.
func (m *Manager) WithdrawPlan(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.plans.withdraw(id, Cancelled, false)
}

// WaitPlan blocks until the plan leaves pending (decision, expiry,
// replacement or the run's end) or ctx ends, and returns its state.
func (m *Manager) WaitPlan(ctx context.Context, id string) (Plan, error) {
	return m.plans.wait(ctx, id)
}

// ConsumeStep spends the first unused step of the run's approved plan that
// matches b exactly (skill, revision, invocation digest, workspace). Each
// step runs once; anything off the plan is refused.
func (m *Manager) ConsumeStep(b Binding) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.liveRunLocked(b.RunID, b.AgentID); err != nil {
		return -1, err
	}
	var cur *request[planData] // only the newest plan of a run can be live
	if plans := m.plans.ofRun(b.RunID); len(plans) > 0 {
		cur = plans[len(plans)-1]
	}
	if cur == nil || cur.state != Approved {
		return -1, refuse("workflow_authorization_missing", "this run has no approved workflow plan")
	}
	want := Step{Skill: b.Skill, Revision: b.Revision, InvocationDigest: b.InvocationDigest, Workspace: b.Workspace}
	for i, s := range cur.data.steps {
		if s == want && !cur.data.consumed[i] {
			cur.data.consumed[i] = true
			m.plans.publish("step_consumed", cur)
			return i, nil
		}
	}
	return -1, refuse("off_plan", "this invocation is not an unused step of the approved plan")
}
