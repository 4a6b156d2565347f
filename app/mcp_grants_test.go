package app

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse/gatehouse/backend/consent"
)

// raisedOf waits for the next UI event name ("plan", "grant", "proposal")
// of type raised and returns its payload.
func raisedOf[T any](t *testing.T, events <-chan UIEvent, name string) T {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case e := <-events:
			if m, ok := e.Data.(map[string]any); ok && e.Name == name && m["type"] == "raised" {
				return m[name].(T)
			}
		case <-deadline:
			var zero T
			t.Fatalf("no %s was raised", name)
			return zero
		}
	}
}

// callAsync runs a tool call in the background; the result arrives on the
// returned channel.
func callAsync(cs *mcp.ClientSession, name string, args any) <-chan *mcp.CallToolResult {
	out := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			res = &mcp.CallToolResult{IsError: true, StructuredContent: map[string]any{"code": "call_error", "message": err.Error()}}
		}
		out <- res
	}()
	return out
}

func wait[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(60 * time.Second):
		t.Fatal("the call did not return")
		var zero T
		return zero
	}
}

func TestMCPCaptureGrants(t *testing.T) {
	work := t.TempDir()
	setCaptureEnv(t, work)
	t.Setenv("GATEHOUSE_PROCESS_CAPTURE_AUTO_GRANT", "0")
	t.Setenv("GATEHOUSE_PROCESS_ALLOWED_ENV_JSON", `["EXTRA"]`)
	ts := startServer(t)
	agentID, tok := addAgent(t, ts, "capturer")
	a1 := mcpConnect(t, ts, tok)
	a2, err := mcpClient(t, ts, tok, nil) // same agent, another connection
	if err != nil {
		t.Fatal(err)
	}
	defer a2.Close()
	events, stop := ts.facade.events.subscribe(64)
	defer stop()
	scenario := map[string]any{"approved": true, "executable": "/bin/sh", "arguments": []string{"-c", "printf granted"}, "working_directory": work, "timeout_ms": 5000}
	capture := func(cs *mcp.ClientSession) <-chan *mcp.CallToolResult {
		return callAsync(cs, "capture_process_scenario", scenario)
	}

	// The operator policy still applies first: outside its boundary the
	// capture is refused with its reason and no dialog is raised.
	outside := map[string]any{"approved": true, "executable": "/bin/sh", "arguments": []string{"-c", "true"}, "working_directory": t.TempDir(), "timeout_ms": 5000}
	if r := wait(t, callAsync(a1, "capture_process_scenario", outside)); !r.IsError || structured(t, r)["code"] != "working_directory_outside_roots" {
		t.Fatalf("outside the boundary: %+v", structured(t, r))
	}
	if p, _ := ts.facade.PendingGrants(Empty{}); len(p.Grants) != 0 {
		t.Fatalf("a grant was asked for a capture the policy refuses: %+v", p.Grants)
	}

	// Denied: nothing runs.
	res := capture(a1)
	g := raisedOf[GrantView](t, events, "grant")
	if g.Agent.Name != "capturer" || g.Request.Executable != "/bin/sh" || strings.Join(g.Command, " ") != "/bin/sh -c printf granted" {
		t.Fatalf("grant view: %+v", g)
	}
	if p, _ := ts.facade.PendingGrants(Empty{}); len(p.Grants) != 1 || p.Grants[0].ID != g.ID {
		t.Fatalf("pending: %+v", p)
	}
	if _, err := ts.facade.DecideGrant(DecideGrantArgs{GrantID: g.ID, Approve: true, Scope: "always"}); err == nil {
		t.Fatal("an unknown scope was accepted")
	}
	ts.facade.DecideGrant(DecideGrantArgs{GrantID: g.ID, Approve: false})
	if r := wait(t, res); !r.IsError || structured(t, r)["code"] != "denied" {
		t.Fatalf("denied: %+v", structured(t, r))
	}

	// Once: one capture, then the next one asks again.
	res = capture(a1)
	g = raisedOf[GrantView](t, events, "grant")
	if _, err := ts.facade.DecideGrant(DecideGrantArgs{GrantID: g.ID, Approve: true, Scope: "once"}); err != nil {
		t.Fatal(err)
	}
	if r := wait(t, res); r.IsError || structured(t, r)["evidence_id"] == nil {
		t.Fatalf("once: %+v", structured(t, r))
	}
	res = capture(a1)
	g = raisedOf[GrantView](t, events, "grant")
	runA1 := g.RunID
	ts.facade.DecideGrant(DecideGrantArgs{GrantID: g.ID, Approve: true, Scope: "session"})
	if r := wait(t, res); r.IsError {
		t.Fatalf("session (first): %+v", structured(t, r))
	}
	// Session: later captures of this connection need no dialog.
	for i := range 2 {
		r := wait(t, capture(a1))
		if r.IsError {
			t.Fatalf("session capture %d: %+v", i, structured(t, r))
		}
	}
	if p, _ := ts.facade.PendingGrants(Empty{}); len(p.Grants) != 0 {
		t.Fatalf("a session grant raised another dialog: %+v", p.Grants)
	}
	// A wider request (another environment name) is outside the session grant.
	wider := map[string]any{}
	for k, v := range scenario {
		wider[k] = v
	}
	wider["environment"] = map[string]any{"EXTRA": "1"}
	res = callAsync(a1, "capture_process_scenario", wider)
	g = raisedOf[GrantView](t, events, "grant")
	if g.RunID != runA1 || len(g.Request.EnvNames) != 1 {
		t.Fatalf("wider request: %+v", g)
	}
	ts.facade.DecideGrant(DecideGrantArgs{GrantID: g.ID, Approve: false})
	wait(t, res)

	// The other connection of the same agent does not see the session grant.
	res = capture(a2)
	g = raisedOf[GrantView](t, events, "grant")
	if g.RunID == runA1 {
		t.Fatal("the second connection reused the first one's run")
	}
	// It disconnects while its grant waits: the grant is cancelled.
	a2.Close()
	if r := wait(t, res); !r.IsError {
		t.Fatalf("a disconnected capture ran: %+v", structured(t, r))
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if got, ok := ts.facade.consent.GetGrant(g.ID); !ok || got.State == consent.Cancelled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the disconnected connection's grant is still live")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Disconnecting the first connection drops its session grant.
	a1.Close()
	deadline = time.Now().Add(10 * time.Second)
	for {
		_, err := ts.facade.consent.UseGrant(runA1, agentID, consent.GrantRequest{Executable: "/bin/sh", WorkingDir: work})
		if consent.Code(err) == "unknown_run" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("session grant outlived its connection: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestMCPProposeWorkflow(t *testing.T) {
	ts := startServer(t)
	agentID, tok := addAgent(t, ts, "planner")
	cs := mcpConnect(t, ts, tok)
	defer cs.Close()
	events, stop := ts.facade.events.subscribe(64)
	defer stop()
	ws := t.TempDir()
	step := func(text string) map[string]any {
		return map[string]any{"name": "text-metrics", "input": map[string]any{"text": text}, "workspace": ws}
	}
	run := func(cs *mcp.ClientSession, text string) map[string]any {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_skill", Arguments: step(text)})
		if err != nil {
			t.Fatal(err)
		}
		return structured(t, res)
	}
	propose := func(steps ...map[string]any) <-chan *mcp.CallToolResult {
		return callAsync(cs, "propose_workflow", map[string]any{"steps": steps})
	}

	// Outside workflow mode no plan is raised.
	r := wait(t, propose(step("a")))
	if !r.IsError || structured(t, r)["code"] != consent.CodeNotWorkflowMode {
		t.Fatalf("ask mode: %+v", structured(t, r))
	}
	if _, err := ts.facade.SetPolicy(SetPolicyArgs{Policy: json.RawMessage(`{"mode":"workflow","safeMode":false,"trusted":[]}`)}); err != nil {
		t.Fatal(err)
	}
	// A step that would fail its input schema: refused with its path, nothing raised.
	r = wait(t, propose(step("ok"), map[string]any{"name": "text-metrics", "input": map[string]any{"text": 5}, "workspace": ws}))
	out := structured(t, r)
	b, _ := json.Marshal(out["issues"])
	if !r.IsError || out["code"] != "invalid_plan" || !strings.Contains(string(b), `$.steps[1].input`) {
		t.Fatalf("invalid step: %v", out)
	}
	if p, _ := ts.facade.PendingPlans(Empty{}); len(p.Plans) != 0 {
		t.Fatalf("an invalid plan was raised: %+v", p)
	}
	// Nothing runs without a plan.
	if env := run(cs, "one two"); firstCode(env) != "workflow_authorization_missing" {
		t.Fatalf("no plan: %v", env)
	}

	// Approved plan: each step once, exactly as planned.
	res := propose(step("one two"), step("three four five"))
	plan := raisedOf[PlanView](t, events, "plan")
	if plan.Agent.Name != "planner" || len(plan.Steps) != 2 || !strings.Contains(plan.Steps[1].Invocation, "three four five") || plan.Steps[0].Revision == "" {
		t.Fatalf("plan view: %+v", plan)
	}
	if _, err := ts.facade.DecidePlan(DecidePlanArgs{PlanID: plan.ID, Approve: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.facade.DecidePlan(DecidePlanArgs{PlanID: plan.ID, Approve: false}); err == nil {
		t.Fatal("a plan was decided twice")
	}
	if out := structured(t, wait(t, res)); out["state"] != "approved" || out["planId"] != plan.ID {
		t.Fatalf("propose result: %v", out)
	}
	if env := run(cs, "one two"); env["status"] != "succeeded" || env["output"].(map[string]any)["words"].(float64) != 2 {
		t.Fatalf("step 1: %v", env)
	}
	if env := run(cs, "one two"); firstCode(env) != "off_plan" {
		t.Fatalf("step 1 again: %v", env)
	}
	if env := run(cs, "not in the plan"); firstCode(env) != "off_plan" {
		t.Fatalf("off plan: %v", env)
	}
	// Another connection of the same agent cannot use this plan.
	other := mcpConnect(t, ts, tok)
	if env := run(other, "three four five"); firstCode(env) != "workflow_authorization_missing" {
		t.Fatalf("other connection: %v", env)
	}
	// Policy is re-read before every launch: blocking stops the approved
	// plan's remaining step, and unblocking does not spend it.
	setMode := func(mode string) {
		t.Helper()
		if _, err := ts.facade.SetPolicy(SetPolicyArgs{Policy: json.RawMessage(`{"mode":"` + mode + `","safeMode":false,"trusted":[]}`)}); err != nil {
			t.Fatal(err)
		}
	}
	setMode("blocked")
	if env := run(cs, "three four five"); firstCode(env) != "blocked" {
		t.Fatalf("step 2 while blocked: %v", env)
	}
	setMode("workflow")
	if env := run(cs, "three four five"); env["status"] != "succeeded" {
		t.Fatalf("step 2: %v", env)
	}

	// Denied plan.
	res = propose(step("six"))
	plan = raisedOf[PlanView](t, events, "plan")
	ts.facade.DecidePlan(DecidePlanArgs{PlanID: plan.ID, Approve: false})
	if r := wait(t, res); !r.IsError || structured(t, r)["state"] != "denied" {
		t.Fatalf("denied: %+v", structured(t, r))
	}
	if env := run(cs, "six"); firstCode(env) != "workflow_authorization_missing" {
		t.Fatalf("after a denied plan: %v", env)
	}

	// A connection that disconnects while its plan waits cancels it.
	res = callAsync(other, "propose_workflow", map[string]any{"steps": []any{step("seven")}})
	plan = raisedOf[PlanView](t, events, "plan")
	other.Close()
	wait(t, res)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if p, _ := ts.facade.PendingPlans(Empty{}); len(p.Plans) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a disconnected connection's plan is still pending")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := ts.facade.DecidePlan(DecidePlanArgs{PlanID: plan.ID, Approve: true}); err == nil {
		t.Fatal("a cancelled plan was approved")
	}
	_ = agentID
}

func TestMCPRunSkillExpires(t *testing.T) {
	clock := consent.NewManualClock(time.Now())
	ts := startServerWith(t, consentWindow{clock: clock})
	_, cs := connectAgent(t, ts, "slow-person")
	events, stop := ts.facade.events.subscribe(64)
	defer stop()
	res := callAsync(cs, "run_skill", map[string]any{"name": "text-metrics", "input": map[string]any{"text": "late"}, "workspace": t.TempDir()})
	p := raisedOf[ProposalView](t, events, "proposal")
	clock.Advance(consent.Window, 0)
	env := structured(t, wait(t, res))
	if env["status"] != "refused" || firstCode(env) != "expired" {
		t.Fatalf("expired: %v", env)
	}
	if _, err := ts.facade.Decide(DecideArgs{ProposalID: p.ID, Approve: true}); err == nil {
		t.Fatal("an expired proposal was approved")
	}
}
