package consent

import (
	"context"
	"sort"
	"time"
)

// Step is one exact, pre-approved invocation of a workflow plan.
type Step struct {
	Skill            string    `json:"skill"`
	Revision         string    `json:"revision"`
	InvocationDigest string    `json:"invocationDigest"`
	Workspace        Workspace `json:"workspace"`
}

// PlanState is a workflow plan's state. Pending and approved are live.
type PlanState string

// Plan states.
const (
	PlanPending   PlanState = "pending"
	PlanApproved  PlanState = "approved"
	PlanDenied    PlanState = "denied"
	PlanExpired   PlanState = "expired"   // nobody decided within Window
	PlanStale     PlanState = "stale"     // replaced by a newer plan of the run
	PlanCancelled PlanState = "cancelled" // the run ended
)

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

type plan struct {
	Plan
	createdMono time.Duration
	done        chan struct{} // closed when the plan leaves pending
}

func (p *plan) copy() Plan {
	c := p.Plan
	c.Steps = append([]Step(nil), p.Steps...)
	c.Consumed = append([]bool(nil), p.Consumed...)
	return c
}

// setPlanLocked moves p to s, wakes its waiters and tells subscribers.
// m.mu must be held.
func (m *Manager) setPlanLocked(p *plan, s PlanState) {
	if p.State == PlanPending {
		close(p.done)
	}
	p.State = s
	c := p.copy()
	m.broadcast(Event{Kind: KindPlan, Type: string(s), Plan: &c})
}

// expirePlanLocked turns a pending plan whose window has passed into
// PlanExpired. An approved plan keeps its unused steps for the run.
func (m *Manager) expirePlanLocked(p *plan) {
	if p.State == PlanPending && m.clock.Mono()-p.createdMono >= Window {
		m.setPlanLocked(p, PlanExpired)
	}
}

// ProposePlan puts a bounded plan (1 to MaxPlanSteps exact steps) up for
// approval in a run. A pending earlier plan of the run becomes stale; an
// approved one is replaced, and its unused steps with it.
func (m *Manager) ProposePlan(runID, agentID string, steps []Step) (Plan, error) {
	if len(steps) == 0 || len(steps) > MaxPlanSteps {
		return Plan{}, refuse("invalid_plan", "a plan has 1 to %d steps, got %d", MaxPlanSteps, len(steps))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, err := m.liveRunLocked(runID, agentID)
	if err != nil {
		return Plan{}, err
	}
	if old := r.plan; old != nil {
		m.expirePlanLocked(old)
		if old.State == PlanPending || old.State == PlanApproved {
			m.setPlanLocked(old, PlanStale)
		}
		delete(m.plans, old.ID)
	}
	wall := m.clock.Wall()
	p := &plan{
		Plan: Plan{ID: newID(), RunID: runID, AgentID: agentID, State: PlanPending, Steps: append([]Step(nil), steps...),
			Consumed: make([]bool, len(steps)), CreatedAt: wall, ExpiresAt: wall.Add(Window)},
		createdMono: m.clock.Mono(), done: make(chan struct{}),
	}
	r.plan = p
	m.plans[p.ID] = p
	c := p.copy()
	m.broadcast(Event{Kind: KindPlan, Type: "raised", Plan: &c})
	return c, nil
}

// GetPlan returns a plan's current state.
func (m *Manager) GetPlan(id string) (Plan, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.plans[id]
	if !ok {
		return Plan{}, false
	}
	m.expirePlanLocked(p)
	return p.copy(), true
}

// PendingPlans lists the plans waiting for a decision, oldest first.
func (m *Manager) PendingPlans() []Plan {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Plan
	for _, p := range m.plans {
		m.expirePlanLocked(p)
		if p.State == PlanPending {
			out = append(out, p.copy())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out
}

// DecidePlan approves or denies a pending plan, once. Deciding a plan
// that is no longer pending is an error and changes nothing.
func (m *Manager) DecidePlan(planID string, approve bool) (Plan, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.plans[planID]
	if !ok {
		return Plan{}, refuse("unknown_plan", "no plan %s", planID)
	}
	m.expirePlanLocked(p)
	if p.State != PlanPending {
		code := "already_decided"
		if p.State != PlanApproved && p.State != PlanDenied {
			code = string(p.State)
		}
		return p.copy(), refuse(code, "the plan is %s; only a pending plan can be decided", p.State)
	}
	if approve {
		m.setPlanLocked(p, PlanApproved)
	} else {
		m.setPlanLocked(p, PlanDenied)
	}
	return p.copy(), nil
}

// WithdrawPlan cancels a plan that is still pending, for a request that
// stopped waiting (the call was cancelled). A decided plan is unchanged.
func (m *Manager) WithdrawPlan(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.plans[id]; ok && p.State == PlanPending {
		m.setPlanLocked(p, PlanCancelled)
	}
}

// WaitPlan blocks until the plan leaves pending (decision, expiry,
// replacement or the run's end) or ctx ends, and returns its state.
func (m *Manager) WaitPlan(ctx context.Context, id string) (Plan, error) {
	m.mu.Lock()
	p, ok := m.plans[id]
	if !ok {
		m.mu.Unlock()
		return Plan{}, refuse("unknown_plan", "no plan %s", id)
	}
	done := p.done
	m.mu.Unlock()
	err := waitUntil(ctx, done, func() bool { got, _ := m.GetPlan(id); return got.State != PlanPending })
	if err != nil {
		return Plan{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return p.copy(), nil
}

// ConsumeStep spends the first unused step of the run's approved plan that
// matches b exactly (skill, revision, invocation digest, workspace). Each
// step runs once; anything off the plan is refused.
func (m *Manager) ConsumeStep(b Binding) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, err := m.liveRunLocked(b.RunID, b.AgentID)
	if err != nil {
		return -1, err
	}
	if r.plan != nil {
		m.expirePlanLocked(r.plan)
	}
	if r.plan == nil || r.plan.State != PlanApproved {
		return -1, refuse("workflow_authorization_missing", "this run has no approved workflow plan")
	}
	want := Step{Skill: b.Skill, Revision: b.Revision, InvocationDigest: b.InvocationDigest, Workspace: b.Workspace}
	for i, s := range r.plan.Steps {
		if s == want && !r.plan.Consumed[i] {
			r.plan.Consumed[i] = true
			c := r.plan.copy()
			m.broadcast(Event{Kind: KindPlan, Type: "step_consumed", Plan: &c})
			return i, nil
		}
	}
	return -1, refuse("off_plan", "this invocation is not an unused step of the approved plan")
}

// waitUntil blocks until done is closed, settled reports true, or ctx
// ends. Windows are measured on the injected clock, which need not run at
// the speed of real timers, so settled is re-checked every quarter second
// rather than trusting one long timer.
func waitUntil(ctx context.Context, done <-chan struct{}, settled func() bool) error {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return nil
		case <-tick.C:
			if settled() {
				return nil
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
