package app

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestWorkflowStepApprovalIsTheNextDialogsBase: a revision the person
// approved as a step of a workflow plan is recorded in the approval book
// by the app's approvalRecorder when the step is taken, so the next
// consent dialog for that skill (raised for a real MCP client's run in ask
// mode) compares with it and says "same", naming the planned revision;
// before the plan, the same dialog said "new".
func TestWorkflowStepApprovalIsTheNextDialogsBase(t *testing.T) {
	ts := startServer(t)
	_, tok := addAgent(t, ts, "planner")
	cs := mcpConnect(t, ts, tok)
	defer cs.Close()
	events, stop := ts.facade.events.subscribe(64)
	defer stop()
	ws := t.TempDir()
	step := map[string]any{"name": "text-metrics", "input": map[string]any{"text": "one two"}, "workspace": ws}
	setMode := func(mode string) {
		t.Helper()
		if _, err := ts.facade.SetPolicy(SetPolicyArgs{Policy: json.RawMessage(`{"mode":"` + mode + `","safeMode":false,"trusted":[]}`)}); err != nil {
			t.Fatal(err)
		}
	}
	// askAndDeny raises the dialog for one run of the step, denies it and
	// returns the dialog's comparison with the approval book.
	askAndDeny := func() ApprovalView {
		t.Helper()
		res := callAsync(cs, "run_skill", step)
		p := raisedOf[ProposalView](t, events, "proposal")
		if _, err := ts.facade.Decide(DecideArgs{ProposalID: p.ID, Approve: false}); err != nil {
			t.Fatal(err)
		}
		if env := structured(t, wait(t, res)); env["status"] == "succeeded" {
			t.Fatalf("a denied run ran: %v", env)
		}
		return p.Approval
	}

	setMode("ask")
	if a := askAndDeny(); a.Status != "new" || a.ApprovedRevision != "" {
		t.Fatalf("before any approval: %+v", a)
	}

	setMode("workflow")
	res := callAsync(cs, "propose_workflow", map[string]any{"steps": []any{step}})
	plan := raisedOf[PlanView](t, events, "plan")
	if _, err := ts.facade.DecidePlan(DecidePlanArgs{PlanID: plan.ID, Approve: true}); err != nil {
		t.Fatal(err)
	}
	if out := structured(t, wait(t, res)); out["state"] != "approved" {
		t.Fatalf("plan: %v", out)
	}
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_skill", Arguments: step})
	if err != nil {
		t.Fatal(err)
	}
	if env := structured(t, r); env["status"] != "succeeded" {
		t.Fatalf("planned step: %v", env)
	}

	setMode("ask")
	if a := askAndDeny(); a.Status != "same" || a.ApprovedRevision != plan.Steps[0].Revision || a.ApprovedAt == nil || len(a.Changes) != 0 {
		t.Fatalf("after the planned step: %+v, want same as the plan's revision %s", a, plan.Steps[0].Revision)
	}
}
