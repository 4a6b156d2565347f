package consent

import (
	"context"
	"fmt"

	"github.com/gatehouse/gatehouse/backend/bundle"
	"github.com/gatehouse/gatehouse/backend/policy"
)

// CodeNotWorkflowMode refuses a plan when the policy is not in workflow
// mode: plans authorize nothing in any other mode, so none is raised.
const CodeNotWorkflowMode = "not_workflow_mode"

// PlanAsker brings a raised plan before the person (the plan dialog) and
// returns once it left pending, or ctx ended.
type PlanAsker func(ctx context.Context, p Plan) error

// PlanOutcome is the result of asking for a workflow plan: the plan as the
// person left it, or a refusal (Code and Issues, every issue with the path
// of the step it is about) when no plan was raised.
type PlanOutcome struct {
	Plan   Plan
	Code   string
	Issues []bundle.Issue
}

// ProposePlan applies the same admission as Execute (policy readable, safe
// mode off, agent registered, enabled and allowed to execute skills, mode
// not blocked), requires workflow mode, checks every step exactly as a run
// would be checked before consent (runnable skill, invocation valid
// against its input schema), then raises the plan in the run and waits
// for the person through ask. Nothing is raised when any check fails.
func (p *Pipeline) ProposePlan(ctx context.Context, runID, agentID string, steps []*Request, ask PlanAsker) PlanOutcome {
	refusal := func(code, path, msg string) PlanOutcome {
		return PlanOutcome{Code: code, Issues: []bundle.Issue{{Code: code, Path: path, Message: msg}}}
	}
	if code, _, msg := p.admit(ctx, agentID); code != "" {
		return refusal(code, "$", msg)
	}
	if pol, _ := p.Policy.Get(ctx); pol.Mode != policy.ModeWorkflow {
		return refusal(CodeNotWorkflowMode, "$", fmt.Sprintf("the execution policy is in %q mode; workflow plans apply only in %q mode", pol.Mode, policy.ModeWorkflow))
	}
	if len(steps) == 0 || len(steps) > MaxPlanSteps {
		return refusal("invalid_plan", "$.steps", fmt.Sprintf("a plan has 1 to %d steps, got %d", MaxPlanSteps, len(steps)))
	}
	var issues []bundle.Issue
	planned := make([]Step, len(steps))
	for i, r := range steps {
		at := fmt.Sprintf("$.steps[%d]", i)
		if !r.Execution.Available {
			issues = append(issues, bundle.Issue{Code: "unavailable", Path: at + ".name", Message: fmt.Sprintf("skill %q has no runnable script (%s)", r.Skill, r.Execution.Reason)})
			continue
		}
		for _, is := range validate(r) {
			is.Path = at + ".input" + trimRoot(is.Path)
			issues = append(issues, is)
		}
		b := r.Binding()
		planned[i] = Step{Skill: b.Skill, Revision: b.Revision, InvocationDigest: b.InvocationDigest, Workspace: b.Workspace}
	}
	if len(issues) > 0 {
		return PlanOutcome{Code: "invalid_plan", Issues: issues}
	}
	plan, err := p.Consent.ProposePlan(runID, agentID, planned)
	if err != nil {
		return refusal(Code(err), "$", err.Error())
	}
	if ask == nil {
		return refusal(CodePermissionRequired, "$", "this plan needs a person's approval and nobody can be asked")
	}
	if err := ask(ctx, plan); err != nil {
		p.Consent.WithdrawPlan(plan.ID)
		return refusal(CodePermissionRequired, "$", "could not ask for approval: "+err.Error())
	}
	got, _ := p.Consent.GetPlan(plan.ID)
	return PlanOutcome{Plan: got}
}

// trimRoot turns "$" or "$.a" into "" or ".a" so an invocation issue's
// path can be placed under its step.
func trimRoot(path string) string {
	if len(path) > 0 && path[0] == '$' {
		return path[1:]
	}
	return path
}
