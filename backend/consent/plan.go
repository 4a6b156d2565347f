package consent

// Step is one exact, pre-approved invocation of a workflow plan.
type Step struct {
	Skill            string    `json:"skill"`
	Revision         string    `json:"revision"`
	InvocationDigest string    `json:"invocationDigest"`
	Workspace        Workspace `json:"workspace"`
}

// PlanState is a workflow plan's state.
type PlanState string

// Plan states.
const (
	PlanPending  PlanState = "pending"
	PlanApproved PlanState = "approved"
	PlanDenied   PlanState = "denied"
)

// Plan is a copy of a run's workflow plan.
type Plan struct {
	ID       string    `json:"id"`
	RunID    string    `json:"runId"`
	State    PlanState `json:"state"`
	Steps    []Step    `json:"steps"`
	Consumed []bool    `json:"consumed"`
}

type plan struct{ Plan }

func (p *plan) copy() Plan {
	c := p.Plan
	c.Steps = append([]Step(nil), p.Steps...)
	c.Consumed = append([]bool(nil), p.Consumed...)
	return c
}

// ProposePlan puts a bounded plan (1 to MaxPlanSteps exact steps) up for
// approval in a run, replacing any earlier plan of that run.
func (m *Manager) ProposePlan(runID, agentID string, steps []Step) (Plan, error) {
	if len(steps) == 0 || len(steps) > MaxPlanSteps {
		return Plan{}, refuse("invalid_plan", "a plan has 1 to %d steps, got %d", MaxPlanSteps, len(steps))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.runs[runID]
	if !ok || r.ended {
		return Plan{}, refuse("unknown_run", "no live run %s", runID)
	}
	if r.agentID != agentID {
		return Plan{}, refuse("wrong_agent", "run %s belongs to another agent", runID)
	}
	r.plan = &plan{Plan{ID: newID(), RunID: runID, State: PlanPending, Steps: append([]Step(nil), steps...), Consumed: make([]bool, len(steps))}}
	return r.plan.copy(), nil
}

// DecidePlan approves or denies a run's pending plan, once.
func (m *Manager) DecidePlan(runID, planID string, approve bool) (Plan, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.runs[runID]
	if !ok || r.plan == nil || r.plan.ID != planID {
		return Plan{}, refuse("unknown_plan", "no such plan in run %s", runID)
	}
	if r.plan.State != PlanPending {
		return r.plan.copy(), refuse("already_decided", "the plan is %s", r.plan.State)
	}
	r.plan.State = PlanDenied
	if approve {
		r.plan.State = PlanApproved
	}
	return r.plan.copy(), nil
}

// ConsumeStep spends the first unused step of the run's approved plan that
// matches b exactly (skill, revision, invocation digest, workspace). Each
// step runs once; anything off the plan is refused.
func (m *Manager) ConsumeStep(b Binding) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.runs[b.RunID]
	if !ok || r.ended {
		return -1, refuse("unknown_run", "no live run %s", b.RunID)
	}
	if r.agentID != b.AgentID {
		return -1, refuse("wrong_agent", "run %s belongs to another agent", b.RunID)
	}
	if r.plan == nil || r.plan.State != PlanApproved {
		return -1, refuse("workflow_authorization_missing", "this run has no approved workflow plan")
	}
	want := Step{Skill: b.Skill, Revision: b.Revision, InvocationDigest: b.InvocationDigest, Workspace: b.Workspace}
	for i, s := range r.plan.Steps {
		if s == want && !r.plan.Consumed[i] {
			r.plan.Consumed[i] = true
			return i, nil
		}
	}
	return -1, refuse("off_plan", "this invocation is not an unused step of the approved plan")
}
