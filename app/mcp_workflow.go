package app

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse/gatehouse/backend/consent"
	"github.com/gatehouse/gatehouse/backend/runner"
)

// addWorkflowTool registers propose_workflow.
func (s *mcpService) addWorkflowTool(srv *mcp.Server, t *mcpTools) {
	step := objectSchema(map[string]any{
		"name":      stringSchema("skill name"),
		"input":     map[string]any{"type": "object", "description": "the exact invocation of this step"},
		"workspace": stringSchema("absolute path of the working directory"),
	}, []string{"name", "input", "workspace"})
	srv.AddTool(&mcp.Tool{Name: "propose_workflow", Description: "When the person's policy is in workflow mode, ask them to approve a plan of up to " +
		fmt.Sprint(consent.MaxPlanSteps) + " exact skill runs in the Gatehouse app. The call waits for the decision. " +
		"Each approved step may then be run once with run_skill, with exactly the same name, input and workspace, on this connection only.",
		InputSchema: objectSchema(map[string]any{"steps": map[string]any{"type": "array", "items": step, "minItems": 1, "maxItems": consent.MaxPlanSteps}},
			[]string{"steps"})}, t.proposeWorkflow)
}

type workflowStep struct {
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	Workspace string          `json:"workspace"`
}

func (t *mcpTools) proposeWorkflow(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a struct {
		Steps []workflowStep `json:"steps"`
	}
	if err := decodeArgs(req.Params.Arguments, &a); err != nil {
		return toolError("invalid_arguments", err.Error()), nil
	}
	f := t.s.f
	runID := t.s.runFor(req.Session, t.agentID)
	reqs := make([]*consent.Request, 0, len(a.Steps))
	roots := make([]string, 0, len(a.Steps))
	var issues []map[string]string
	bad := func(i int, field, code, msg string) {
		issues = append(issues, map[string]string{"code": code, "path": fmt.Sprintf("$.steps[%d].%s", i, field), "message": msg})
	}
	for i, st := range a.Steps {
		if st.Name == "" || filepath.Base(st.Name) != st.Name {
			bad(i, "name", "invalid_arguments", "a skill name is required")
			continue
		}
		if len(st.Input) == 0 || st.Input[0] != '{' {
			bad(i, "input", "invalid_arguments", "input must be a JSON object")
			continue
		}
		sk, err := f.env.resolveSkill(ctx, st.Name)
		if err != nil {
			bad(i, "name", codeOf(err), messageOf(err))
			continue
		}
		ws, err := runner.ResolveWorkspace(st.Workspace)
		if err != nil || !filepath.IsAbs(st.Workspace) {
			msg := "an absolute workspace path is required"
			if err != nil {
				msg = err.Error()
			}
			bad(i, "workspace", "invalid_workspace", msg)
			continue
		}
		r := &consent.Request{AgentID: t.agentID, RunID: runID, Skill: sk.Name, Execution: f.env.inspectExecution(sk), Invocation: st.Input, Workspace: ws}
		if f.env.Pin != nil {
			r.Pin = *f.env.Pin
		}
		reqs = append(reqs, r)
		roots = append(roots, sk.Root.Path)
	}
	if len(issues) > 0 {
		return jsonResult(map[string]any{"error": true, "code": "invalid_plan", "issues": issues}, true), nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer t.s.track(req.Session.ID(), cancel)()
	go watchSession(ctx, req.Session, cancel)
	defer t.keepAlive(ctx, req.Session, req.Params.GetProgressToken(), "waiting for the plan's approval in Gatehouse")() // mcp_wait.go
	out := f.pipeline.ProposePlan(ctx, runID, t.agentID, reqs, f.askPlan(t.agentID, planSteps(reqs, roots)))
	if out.Code != "" {
		return jsonResult(map[string]any{"error": true, "code": out.Code, "issues": out.Issues}, true), nil
	}
	steps := make([]map[string]any, len(a.Steps))
	for i, st := range out.Plan.Steps {
		steps[i] = map[string]any{"name": st.Skill, "revision": st.Revision, "workspace": st.Workspace.Path}
	}
	res := map[string]any{"planId": out.Plan.ID, "state": out.Plan.State, "steps": steps}
	return jsonResult(res, out.Plan.State != consent.PlanApproved), nil
}
